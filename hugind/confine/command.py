"""The argv that starts a planned child confined, with the layers this machine has.

With bubblewrap the child gets a mount view built from the plan (system
directories and policy roots bound at their own paths, a private ``/tmp``,
a fresh ``/proc`` and a minimal ``/dev``, secrets and hugind's own files
hidden), every namespace, no capabilities, no nested user namespaces, a new
session and death with its parent, hugind's seccomp filter (``--seccomp``,
read from hugind's sealed memfd by the ``sh`` step that starts bwrap); the
rlimits are set inside, just before the program, from hugind's one table
(:mod:`hugind.confine.limits`): by the view's ``/bin/sh`` where it was checked
to set them exactly (:mod:`hugind.confine.shell_limits`), else by limits.py. Without bubblewrap, the
launcher makes the namespaces itself, holds the filesystem with Landlock,
drops every capability and loads the same filter. Either way the program is
exactly the one the policy checked, with the environment the policy built,
and when hugind runs as root the child is the host's nobody
(:mod:`hugind.confine.nobody`: the launcher's own step, or the step that
starts bwrap).
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hugind.confine import seccomp, shell_limits
from hugind.confine.cgroup import ChildCgroup
from hugind.confine.limits import spec_words
from hugind.confine.plan import ChildPlan, symlinked_system_dirs
from hugind.confine.probe import LAUNCHER, NOBODY, NOBODY_STAGE, Capabilities

# /proc, /dev and /tmp are replaced at depth 1, before deeper binds (a root
# under /tmp must stay visible on top of the private /tmp).
SPECIAL_MOUNTS = (("--proc", "/proc"), ("--dev", "/dev"), ("--tmpfs", "/tmp"), ("--tmpfs", "/var/tmp"))
FIRST_AT_DEPTH = 0
LIMITS = Path(__file__).resolve().parent / "limits.py"  # sets rlimits inside bwrap where sh cannot, then execs
# What the launcher can apply (namespaces: user, mount view, PID, network, IPC, UTS).
LAUNCHER_LAYERS = frozenset({"namespaces", "landlock", "seccomp", "capabilities"})


@dataclass(frozen=True)
class ProxyEndpoint:
    """Where a confined child's only route out leads (see hugind.confine.proxy)."""

    socket_path: str
    port: int
    forwarder: str  # path of the stdlib-only forwarder script
    env: dict[str, str]


# Moves itself into the child's cgroup, then becomes bwrap: nothing bwrap starts escapes the count.
JOIN_CGROUP = 'echo $$ > "$0" && exec "$@"'
# Before bwrap: fd 9 is hugind's seccomp filter (bwrap --seccomp 9 reads and closes it), then
# the cgroup as above (empty: none). Any failure stops here, before a sandbox exists.
SECCOMP_FD = 9
START_BWRAP = 'exec 9<"$0" || exit 126; if [ -n "$1" ]; then echo $$ > "$1" || exit 126; fi; shift; exec "$@"'


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str]
    cgroup: ChildCgroup | None = None

    def release(self) -> None:
        """After the child is gone: remove what was made for it."""
        if self.cgroup is not None:
            self.cgroup.give_back()


def missing_layers(caps: Capabilities) -> tuple[str, ...]:
    missing = []
    if caps.filesystem is None:
        missing.append("filesystem (needs bubblewrap or Landlock)")
    if caps.processes is None:
        missing.append(f"processes (needs bubblewrap or user namespaces: {caps.namespaces_problem})")
    if caps.network is None:
        missing.append("network (needs bubblewrap, user namespaces or Landlock ABI 4)")
    if not caps.seccomp:
        missing.append(f"syscall filter (needs libseccomp and pyseccomp: {caps.seccomp_problem})")
    if caps.process_cap is None:
        missing.append("process count (hugind runs as root and cannot make a pids cgroup; RLIMIT_NPROC spares root)")
    if caps.child_user is None:
        why = caps.nobody_problem or "bubblewrap cannot be started as nobody here"
        missing.append(f"unprivileged user (hugind runs as root; children as nobody need idmapped mounts: {why})")
    return tuple(missing)


def _depth(path: str) -> int:
    return 0 if path == "/" else path.rstrip("/").count("/")


def bwrap_argv(
    plan: ChildPlan,
    bwrap: str,
    python: str | None,
    proxy: ProxyEndpoint | None,
    *,
    seccomp: bool = False,
    nobody: bool = False,
) -> list[str]:
    """``python``: the interpreter that runs limits.py inside to set the plan's rlimits where
    ``/bin/sh`` cannot do it exactly (see shell_limits; None: none set, the zygote's case,
    whose workers set each command's). ``seccomp``: fd 9 holds the filter (see START_BWRAP).
    ``nobody`` (hugind runs as root): bwrap is started by nobody.py, which stages every
    granted path idmapped and makes bwrap, and so the child, the host's nobody."""
    argv = [bwrap, "--die-with-parent", "--new-session", "--unshare-all", "--unshare-user", "--disable-userns"]
    argv += ["--cap-drop", "ALL"]
    if seccomp:
        argv += ["--seccomp", str(SECCOMP_FD)]
    read = list(plan.read)
    limit_words: list[str] = []
    if python is not None:
        env = {**plan.env, **(proxy.env if proxy is not None else {})}
        limit_words = shell_limits.words(plan.rlimits.as_dict(), env, plan.read) or []
        if not limit_words:
            read += [p for p in _interpreter_paths(python, read) if p not in read] + [str(LIMITS)]
            drop = [] if "LC_CTYPE" in plan.env else ["LC_CTYPE"]
            limit_words = [python, "-I", "-S", str(LIMITS), *spec_words(plan.rlimits.as_dict(), drop), "--"]
    if proxy is not None:
        # Read-only is enough: connect() to a socket is not a write to its filesystem.
        read += [os.path.dirname(proxy.socket_path), *_python_paths(), proxy.forwarder]
    # Sorted by depth (stable), so parents are mounted before what lies inside them;
    # the special mounts come first among depth 1 (FIRST_AT_DEPTH sorts before the rest).
    # A private /tmp holds at most the run's memory limit (it is memory).
    size = ["--size", str(plan.rlimits.data_bytes)]
    binds = [
        ((1, FIRST_AT_DEPTH), [*(size if flag == "--tmpfs" else []), flag, where]) for flag, where in SPECIAL_MOUNTS
    ]
    stage: list[str] = []
    source = {}
    if nobody:
        grants = [("write", p) for p in plan.write] + [("read", p) for p in read if p not in plan.write]
        source = {p: f"{NOBODY_STAGE}/{i}" for i, (_, p) in enumerate(grants)}
        given = {**plan.env, **(proxy.env if proxy is not None else {})}
        drop = [] if "LC_CTYPE" in given else ["drop", "LC_CTYPE"]  # PEP 538 adds it to nobody.py's own
        stage = [_python(), "-I", "-S", str(NOBODY), *(w for g in grants for w in g), *drop, "--"]
    binds += [((_depth(p), 1), ["--ro-bind", source.get(p, p), p]) for p in read]
    binds += [((_depth(p), 1), ["--bind", source.get(p, p), p]) for p in plan.write]
    binds += [((1, 1), ["--symlink", target, link]) for link, target in symlinked_system_dirs()]
    for _, words in sorted(binds, key=lambda item: item[0]):
        argv += words
    for path in plan.hide:
        if os.path.isdir(path) and not os.path.islink(path):
            argv += ["--tmpfs", path, "--remount-ro", path]
        else:
            argv += ["--ro-bind", "/dev/null", path]
    if any(p == "/" for p in (*plan.read, *plan.write)):
        argv += ["--tmpfs", "/sys", "--remount-ro", "/sys", "--tmpfs", "/run", "--remount-ro", "/run"]
    argv += ["--chdir", plan.cwd, "--", *limit_words]
    if proxy is not None:
        argv += [_python(), "-I", "-S", proxy.forwarder, "--port", str(proxy.port)]
        argv += ["--unix", proxy.socket_path, "--"]
    return stage + argv + list(plan.argv)


def _python() -> str:
    """The interpreter itself, not a virtualenv's link to it: the link may live where the
    sandbox cannot see (a venv under /tmp), the installation is what _python_paths grants."""
    return os.path.realpath(sys.executable)


def _python_paths() -> list[str]:
    """What the forwarder (a Python script) needs to run inside the view."""
    prefix = os.path.realpath(sys.base_prefix)
    return [] if prefix.startswith("/usr/") or prefix == "/usr" else [prefix]


def _inside(path: str, roots: list[str] | tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def interpreter(read: list[str] | tuple[str, ...]) -> str:
    """A Python for hugind's helpers inside a view: one the view already holds if it can
    (hugind's own, or the system's), else hugind's own (its installation is then granted
    read-only: see _interpreter_paths). Remembered per view: four realpath walks per
    command otherwise, for an answer that depends only on hugind's installation."""
    return _interpreter(tuple(read))


@functools.lru_cache(maxsize=64)
def _interpreter(read: tuple[str, ...]) -> str:
    own = os.path.realpath(sys.executable)
    if _inside(own, read) and _inside(os.path.realpath(sys.base_prefix), read):
        return own
    system = shutil.which("python3", path="/usr/bin:/bin")
    if system is not None and _inside(os.path.realpath(system), read):
        return os.path.realpath(system)
    return own


def _interpreter_paths(python: str, read: list[str]) -> list[str]:
    """What ``python`` needs granted to run inside a view with ``read``."""
    if _inside(python, read):
        return []
    return _python_paths() or [python]


def spec_args(spec: dict[str, Any]) -> list[str]:
    """The launcher's spec as ``KEY VALUE`` arguments (see launcher.parse_spec)."""
    out: list[str] = []
    for key, value in spec.items():
        if value is None:
            continue
        if key == "rlimits":
            for name, number in value.items():
                out += ["rlimit", f"{name}={number}"]
        elif isinstance(value, list):
            for item in value:
                out += [key, str(item)]
        else:
            out += [key, str(int(value)) if isinstance(value, bool) else str(value)]
    return out


def launcher_argv(
    plan: ChildPlan,
    caps: Capabilities,
    proxy: ProxyEndpoint | None,
    cgroup: ChildCgroup | None,
    *,
    rlimits: bool = True,
    only: frozenset[str] | None = None,
) -> list[str]:
    """``only``: for the tests that prove each layer on its own (issue #32), the launcher's
    layers to keep, among LAUNCHER_LAYERS; every other one is off. A function argument
    only: no option, variable or policy key of hugind reaches it."""
    if only is not None and not only <= LAUNCHER_LAYERS:
        raise ValueError(f"unknown layers {sorted(only - LAUNCHER_LAYERS)}")
    on = LAUNCHER_LAYERS if only is None else only
    read = list(plan.read)
    write = list(plan.write)
    if proxy is not None:
        # The socket's directory must be in the view (the mount view holds nothing else).
        read += [*_python_paths(), proxy.forwarder, os.path.dirname(proxy.socket_path)]
    spec = {
        "parent": os.getpid(),
        "cgroup_procs": cgroup.procs if cgroup is not None else None,
        "namespaces": caps.namespaces and "namespaces" in on,
        "nobody": caps.nobody and "namespaces" in on,  # probed only as root, with namespaces
        "loopback": proxy is not None,
        "landlock": caps.landlock_abi if "landlock" in on else 0,
        "read": read,
        "write": write,
        "hide": list(plan.hide),
        "rlimits": plan.rlimits.as_dict() if rlimits else {},
        "restrict_tcp": True,
        "drop_caps": "capabilities" in on,
        "tmp_size": plan.rlimits.data_bytes,
        "seccomp": seccomp.filter_path() if caps.seccomp and "seccomp" in on else None,
        "tcp_port": proxy.port if proxy is not None else None,
        # Python's locale coercion (PEP 538) adds LC_CTYPE to the launcher's own
        # environment; the program must get exactly the planned one.
        "env_drop": [] if "LC_CTYPE" in plan.env else ["LC_CTYPE"],
    }
    argv = [sys.executable, "-I", "-S", str(LAUNCHER), *spec_args(spec), "--"]
    if proxy is not None:
        argv += [_python(), "-I", "-S", proxy.forwarder, "--port", str(proxy.port)]
        argv += ["--unix", proxy.socket_path, "--"]
    return argv + list(plan.argv)


def start_bwrap(argv: list[str], caps: Capabilities, cgroup: ChildCgroup | None) -> list[str]:
    """The ``sh`` step before bwrap: the filter on fd 9, the cgroup joined."""
    if caps.seccomp:
        return ["/bin/sh", "-c", START_BWRAP, seccomp.filter_path(), cgroup.procs if cgroup else "", *argv]
    if cgroup is not None:
        return ["/bin/sh", "-c", JOIN_CGROUP, cgroup.procs, *argv]
    return argv


def confined(plan: ChildPlan, caps: Capabilities, proxy: ProxyEndpoint | None = None) -> Launch:
    """How to start ``plan`` on this machine. A network plan without a proxy gets no network."""
    if plan.network != "proxy":
        proxy = None
    env = dict(plan.env)
    if proxy is not None:
        env.update(proxy.env)
    cgroup = ChildCgroup.take(Path(caps.pids_cgroup), plan.rlimits.processes) if caps.pids_cgroup else None
    if caps.bwrap:
        argv = bwrap_argv(
            plan, caps.bwrap, interpreter(plan.read), proxy, seccomp=caps.seccomp, nobody=caps.bwrap_nobody
        )
        argv = start_bwrap(argv, caps, cgroup)
    else:
        argv = launcher_argv(plan, caps, proxy, cgroup)
    return Launch(argv, env, cgroup)
