"""What this machine offers for confining children, probed once per process.

Each layer is probed by asking the kernel (Landlock's ABI version) or by
running the mechanism for real once (a bwrap sandbox, a user+PID+network
namespace), because a binary or a sysctl being present does not mean the
mechanism works here (containers often forbid nested namespaces).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from hugind.confine import landlock, seccomp
from hugind.confine.cgroup import pids_parent

# Tests (and people diagnosing a machine) point this at another bwrap, or at
# "none" to take the path a machine without bubblewrap takes.
BWRAP_ENV = "HUGIND_BWRAP"
# Comma list of layers to treat as unavailable (bwrap, namespaces, landlock, cgroup, seccomp, nobody):
# shows what a poorer machine does. It can only take layers away, and a run
# that requires confinement then refuses children instead of running them bare.
DISABLE_ENV = "HUGIND_CONFINE_DISABLE"
LAUNCHER = Path(__file__).resolve().parent / "launcher.py"
NOBODY = Path(__file__).resolve().parent / "nobody.py"  # starts bwrap as the host's nobody (root only)
NOBODY_STAGE = "/tmp"  # nobody.STAGE: where it attaches the paths bwrap binds
PROBE_TIMEOUT = 10.0
PROBE_RETRY_PAUSE = 0.2


@dataclass(frozen=True)
class Capabilities:
    bwrap: str | None  # the bwrap executable that works here, or None
    bwrap_problem: str  # why not, when bwrap is None
    landlock_abi: int  # 0: no Landlock
    namespaces: bool  # user+PID+network namespaces can be made without bwrap
    namespaces_problem: str
    pids_cgroup: str | None = None  # where per-child pids-limited cgroups can be made
    root: bool = False  # hugind runs as uid 0: RLIMIT_NPROC does not bind it
    seccomp: bool = False  # hugind can build its syscall filter (libseccomp + pyseccomp)
    seccomp_problem: str = "not probed"
    nobody: bool = False  # as root, the launcher can run children as the host's nobody
    nobody_problem: str = "not probed"
    bwrap_nobody: bool = False  # as root, bwrap can be started as nobody (nobody.py)

    @property
    def child_user(self) -> str | None:
        """Who a child is on the host. None: root (hugind runs as root and cannot map it)."""
        if not self.root:
            return "hugind's own uid, no capabilities"
        if self.bwrap_nobody if self.bwrap else self.nobody:
            return "nobody (65534): user namespace + idmapped roots"
        return None

    @property
    def process_cap(self) -> str | None:
        """What bounds the number of a child's processes (a fork bomb)."""
        if self.pids_cgroup:
            return "pids cgroup"
        # The kernel never applies RLIMIT_NPROC to root; a child that is nobody it binds.
        return "RLIMIT_NPROC" if self.child_user is not None else None

    @property
    def filesystem(self) -> str | None:
        if self.bwrap:
            return "bubblewrap mount namespace"
        view = " + mount view (unshare)" if self.namespaces else ""
        if self.landlock_abi:
            return f"Landlock ABI {self.landlock_abi}{view}"
        return view[3:] or None

    @property
    def processes(self) -> str | None:
        if self.bwrap:
            return "bubblewrap PID namespace"
        if self.namespaces:
            return "PID namespace (unshare)"
        return None

    @property
    def network(self) -> str | None:
        if self.bwrap:
            return "bubblewrap network namespace"
        if self.namespaces:
            return "network namespace (unshare)"
        if self.landlock_abi >= 4:
            return f"Landlock ABI {self.landlock_abi} (TCP only)"
        return None


def landlock_abi() -> int:
    return landlock.abi_version() if sys.platform.startswith("linux") else 0


def _run_probe(argv: list[str]) -> str:
    """'' when ``argv`` ran and exited 0, else the first line of what went wrong.

    A failure is tried once more: the verdict holds for the whole process, and a
    layer judged missing over a passing hiccup (a fork refused on a loaded
    machine) would cost every child its confinement, or under --strict its run."""
    problem = _probe_once(argv)
    if problem:
        time.sleep(PROBE_RETRY_PAUSE)
        problem = _probe_once(argv)
    return problem


def _probe_once(argv: list[str]) -> str:
    """From "/": hugind's own working directory may lie where a sandbox hides it (/tmp)."""
    try:
        proc = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT,
            env={"PATH": "/usr/bin:/bin"},
            cwd="/",
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if proc.returncode == 0:
        return ""
    text = proc.stderr.decode(errors="replace").strip().splitlines()
    return text[-1] if text else f"exit status {proc.returncode}"


def _find_bwrap() -> tuple[str | None, str]:
    choice = os.environ.get(BWRAP_ENV)
    if choice is not None and choice.strip().lower() in ("", "none", "0", "off"):
        return None, f"disabled by {BWRAP_ENV}={choice}"
    path = choice or shutil.which("bwrap") or next((p for p in ("/usr/bin/bwrap",) if os.access(p, os.X_OK)), None)
    if path is None:
        return None, "bwrap (bubblewrap) is not installed"
    problem = _run_probe(
        [
            path,
            "--ro-bind",
            "/",
            "/",
            "--unshare-all",
            "--unshare-user",
            "--disable-userns",
            "--die-with-parent",
            "true",
        ]
    )
    if problem:
        return None, f"{path} cannot create a sandbox here: {problem}"
    return path, ""


@functools.lru_cache(maxsize=8)
def _probe(bwrap_choice: str | None, disabled: frozenset[str]) -> Capabilities:
    if "bwrap" in disabled:
        bwrap, bwrap_problem = None, f"disabled by {DISABLE_ENV}"
    else:
        bwrap, bwrap_problem = _find_bwrap()
    abi = 0 if "landlock" in disabled else landlock_abi()
    if "namespaces" in disabled:
        problem = f"disabled by {DISABLE_ENV}"
    else:
        problem = _run_probe([sys.executable, "-I", "-S", str(LAUNCHER), "--probe"])
    cgroup = None if "cgroup" in disabled else pids_parent()
    filter_problem = f"disabled by {DISABLE_ENV}" if "seccomp" in disabled else seccomp.available()
    nobody_problem = _probe_nobody(disabled) if not problem else "needs user namespaces"
    return Capabilities(
        bwrap,
        bwrap_problem,
        abi,
        not problem,
        problem,
        str(cgroup) if cgroup else None,
        os.geteuid() == 0,
        not filter_problem,
        filter_problem,
        not nobody_problem,
        nobody_problem,
        bool(bwrap) and not nobody_problem and not _probe_bwrap_nobody(bwrap),
    )


def _probe_bwrap_nobody(bwrap: str) -> str:
    """'' when nobody.py can start ``bwrap`` as nobody with a staged writable root."""
    with tempfile.TemporaryDirectory(prefix="hugind-probe-") as writable:
        stage = [sys.executable, "-I", "-S", str(NOBODY), "write", writable, "read", "/", "--"]
        sandbox = [bwrap, "--ro-bind", f"{NOBODY_STAGE}/1", "/", "--bind", f"{NOBODY_STAGE}/0", writable]
        sandbox += ["--unshare-all"]
        sandbox += ["--unshare-user", "--disable-userns", "--die-with-parent", "--chdir", writable]
        return _run_probe([*stage, *sandbox, "/bin/sh", "-c", "echo > probe"])


def _probe_nobody(disabled: frozenset[str]) -> str:
    """'' when the launcher can run a child as nobody with a directory writable (root only)."""
    if os.geteuid() != 0:
        return "hugind does not run as root"
    if "nobody" in disabled:
        return f"disabled by {DISABLE_ENV}"
    with tempfile.TemporaryDirectory(prefix="hugind-probe-") as writable:
        return _run_probe([sys.executable, "-I", "-S", str(LAUNCHER), "--probe", writable])


def capabilities() -> Capabilities:
    """The confinement layers this machine offers (cached per probing environment)."""
    disabled = frozenset(w.strip() for w in os.environ.get(DISABLE_ENV, "").split(",") if w.strip())
    return _probe(os.environ.get(BWRAP_ENV), disabled)
