"""One policy, two enforcers: the plan a confined child runs under.

:func:`plan_child` derives from the run's compiled boundary
(``engine.fs_view()``, :mod:`hugind.policy.boundary`), the value that also
decides ``fs.*`` calls and WASI preopens, and says what the child may see:
the boundary's ``child_system`` directories a program needs to run
(read-only, ``child_etc`` without ``child_etc_hidden``), the policy's
readable roots (read-only), its writable roots (read-write, only in
``read-write`` and ``scratch`` modes), the program itself and its working
directory; whether it gets a network (never a direct one); and its rlimits.
bubblewrap and Landlock both enforce this one plan, so the fs policy means
the same thing whichever layer holds it.
"""

from __future__ import annotations

import functools
import math
import os
import stat
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

from hugind.confine.cwd import run_cwd
from hugind.policy.boundary import CHILD_ETC_HIDDEN, CHILD_SYSTEM_DIRS

MiB = 1024 * 1024
# The boundary's defaults, under their old names (the boundary's fields are what a plan reads).
SYSTEM_DIRS = CHILD_SYSTEM_DIRS
ETC_SECRETS = CHILD_ETC_HIDDEN
MAX_PROCESSES = 256
MAX_OPEN_FILES = 1024
MIN_DATA_BYTES = 256 * MiB


@dataclass(frozen=True)
class Rlimits:
    processes: int = MAX_PROCESSES  # RLIMIT_NPROC: bounds fork bombs
    file_size: int = 16 * MiB  # RLIMIT_FSIZE: largest file the child may write
    cpu_seconds: int = 60  # RLIMIT_CPU, per process
    data_bytes: int = 512 * MiB  # RLIMIT_DATA: heap and private writable mappings
    open_files: int = MAX_OPEN_FILES  # RLIMIT_NOFILE

    def as_dict(self) -> dict[str, int]:
        return {
            "nproc": self.processes,
            "fsize": self.file_size,
            "cpu": self.cpu_seconds,
            "data": self.data_bytes,
            "nofile": self.open_files,
            "core": 0,
        }


@dataclass(frozen=True)
class ChildPlan:
    argv: tuple[str, ...]
    cwd: str
    env: dict[str, str]
    read: tuple[str, ...]  # read-only paths (system dirs, readable roots, the program, cwd)
    write: tuple[str, ...]  # read-write paths (writable roots)
    hide: tuple[str, ...]  # paths inside a granted one that the child must not see
    network: str = "none"  # "none" | "proxy"
    rlimits: Rlimits = field(default_factory=Rlimits)


def etc_secrets(engine: Any = None) -> tuple[str, ...]:
    """The boundary's hidden ``/etc`` entries this machine has."""
    if engine is not None:
        return engine.fs_view().child_etc_secrets()
    return tuple(f"/etc/{name}" for name in ETC_SECRETS if os.path.lexists(f"/etc/{name}"))


def _real_dir(path: str) -> bool:
    """A directory and not a symlink to one (one lstat, not isdir + islink)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


# The system directories each run found real (not symlinks), by engine: asked once per run
# rather than seven lstat calls per command. They are the host's OS layout, not a root of
# the policy, and the program and cwd of every command are still resolved afresh.
_SYSTEM: weakref.WeakKeyDictionary[Any, tuple[str, ...]] = weakref.WeakKeyDictionary()
_SYSTEM_LOCK = threading.Lock()


def system_dirs(engine: Any) -> tuple[str, ...]:
    with _SYSTEM_LOCK:
        found = _SYSTEM.get(engine)
        if found is None:
            found = _SYSTEM[engine] = tuple(d for d in engine.fs_view().child_system if _real_dir(d))
    return found


def real_path(path: str) -> str:
    """``os.path.realpath``, asked of the kernel: open the path (O_PATH, following links as
    realpath does) and read back the name of what was opened. Three system calls instead
    of an lstat (and readlink) per component, and one atomic resolution rather than a walk.
    Anything the kernel cannot answer that way (a missing path, no /proc, a file unlinked
    meanwhile) takes os.path.realpath, so the answer is always realpath's."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return os.path.realpath(path)
    try:
        named = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        named = ""
    finally:
        os.close(fd)
    return named if named.startswith("/") and not named.endswith(" (deleted)") else os.path.realpath(path)


def _inside(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _dedupe(paths: list[str]) -> list[str]:
    """Drop paths already covered by another path of the list (keeps the outermost)."""
    out: list[str] = []
    for path in sorted(set(paths), key=lambda p: (p.count("/"), p)):
        if not _inside(path, out):
            out.append(path)
    return out


def fs_grants(engine: Any) -> tuple[list[str], list[str]]:
    """(readable, writable) resolved roots of the policy, per ``runtime_fs_mode``."""
    mode = engine.policy.fs.mode
    if mode == "none":
        return [], []
    view = engine.fs_view()
    readable = [str(r.path) for r in view.readable if os.path.exists(r.path)]
    writable = [str(r.path) for r in view.writable if os.path.exists(r.path)]
    return readable, writable


def absent_roots(engine: Any) -> list[str]:
    """Roots of the policy that do not exist (a child cannot be shown what is not there)."""
    if engine.policy.fs.mode == "none":
        return []
    view = engine.fs_view()
    return sorted({r.spec for r in (*view.readable, *view.writable) if not os.path.lexists(r.path)})


def plan_child(
    engine: Any,
    argv: tuple[str, ...] | list[str],
    cwd: str,
    env: dict[str, str],
    *,
    kind: str = "shell",
) -> ChildPlan:
    """The confinement of one child, derived from the run's policy."""
    policy = engine.policy
    program = real_path(argv[0]) if argv and os.path.isabs(argv[0]) else None
    real_cwd = run_cwd(engine, cwd)  # once per run: see hugind/confine/cwd.py
    view = child_view(engine, program, real_cwd)
    return ChildPlan(
        argv=tuple(argv),
        cwd=real_cwd,
        env=dict(env),
        read=view.read,
        write=view.write,
        hide=view.hide,
        network=view.network,
        rlimits=rlimits_for(policy, kind),
    )


@dataclass(frozen=True)
class View:
    """What a child sees, without the per-command parts (argv, cwd, env, rlimits)."""

    read: tuple[str, ...]
    write: tuple[str, ...]
    hide: tuple[str, ...]
    network: str


def child_view(engine: Any, program: str | None = None, cwd: str | None = None) -> View:
    """The view of the policy; a ``program`` or ``cwd`` outside it is added read-only.
    Without them: the run's shared view (what a zygote holds for all its commands)."""
    boundary = engine.fs_view()
    readable, writable = fs_grants(engine)
    network = "proxy" if engine.policy.net.allow else "none"
    roots = (tuple(readable), tuple(writable))
    internal = boundary.internal_strs
    return _compose(
        system_dirs(engine), boundary.child_etc, *roots, program, cwd, internal, etc_secrets(engine), network
    )


@functools.lru_cache(maxsize=64)
def _compose(
    system: tuple[str, ...],
    etc: str,
    readable: tuple[str, ...],
    writable_roots: tuple[str, ...],
    program: str | None,
    cwd: str | None,
    internal: tuple[str, ...],
    secrets: tuple[str, ...],
    network: str,
) -> View:
    """The view from what the file system said just now: a pure function of its
    arguments (every one of them looked up afresh by the caller), hence remembered."""
    read = [*system, etc, *readable]
    if program and not _inside(program, read):
        read.append(program)
    if cwd is not None and not _inside(cwd, read + list(writable_roots)):
        read.append(cwd)
    # Nothing inside hugind's own files is ever granted (a cwd or program in there included).
    internal_list = list(internal)
    read = [p for p in read if not _inside(p, internal_list)]
    writable = _dedupe([p for p in writable_roots if not _inside(p, internal_list)])
    # A readable path inside a writable root is writable by the policy: no ro bind over it.
    read = [p for p in _dedupe(read) if not _inside(p, writable)]
    granted = read + writable
    hide = [d for d in internal if _inside(d, granted)]
    hide += [s for s in secrets if _inside(s, granted)]
    return View(tuple(read), tuple(writable), tuple(sorted(set(hide))), network)


def rlimits_for(policy: Any, kind: str) -> Rlimits:
    """Per-child caps from the policy: file size from the fs write cap, CPU from the
    command's (or for an MCP server the run's) timeout, data from the memory cap."""
    timeout = policy.shell.timeout if kind == "shell" else policy.limits.timeout
    return Rlimits(
        file_size=max(policy.fs.max_write_bytes, 1 * MiB),
        cpu_seconds=max(1, math.ceil(timeout) + 1),
        data_bytes=max(policy.limits.memory_mb * MiB, MIN_DATA_BYTES),
    )


def symlinked_system_dirs() -> list[tuple[str, str]]:
    """(link, target) for /bin, /lib ... that are symlinks on merged-/usr systems."""
    out = []
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            out.append((d, os.readlink(d)))
    return out
