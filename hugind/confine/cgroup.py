"""A pids-limited cgroup per child: the process cap that also binds root.

RLIMIT_NPROC does not apply to processes of uid 0 (the kernel exempts the
root user outright, in any user namespace), so a fork bomb started by a
root-run hugind is bounded only by a cgroup's ``pids.max``. hugind makes one
cgroup per child under its own (cgroup v1 ``pids`` hierarchy, or v2 where
the ``pids`` controller is delegated to hugind's cgroup), the child moves
itself in before it starts anything; once it is empty the cgroup serves the
next child, and hugind removes its cgroups when it exits.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import itertools
import os
import signal
import threading
import time
from pathlib import Path

V1_ROOT = Path("/sys/fs/cgroup/pids")
V2_ROOTS = (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified"))
_counter = itertools.count()
KILL_ROUNDS = 200  # cgroup v1: list-and-kill rounds (a fork bomb refills it, up to pids.max)


def _own_path(controller: str | None) -> str | None:
    """This process's cgroup path in the v1 hierarchy of ``controller`` (None: the v2 one)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if (controller is None and controllers == "") or (controller in controllers.split(",")):
            return path
    return None


def _usable(parent: Path) -> bool:
    """Can hugind make a child cgroup here with a pids limit? (tried for real, once)"""
    probe = parent / f"hugind-probe-{os.getpid()}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        (probe / "pids.max").write_text("1")
        return True
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()


def _sweep(parent: Path) -> None:
    """Remove empty cgroups left by hugind processes that no longer exist (killed ones)."""
    with contextlib.suppress(OSError):
        for entry in parent.glob("hugind-*-*"):
            pid = entry.name.split("-")[1]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                with contextlib.suppress(OSError):
                    entry.rmdir()


@functools.lru_cache(maxsize=1)
def pids_parent() -> Path | None:
    """Where hugind can make pids-limited cgroups, or None."""
    v1 = _own_path("pids")
    if v1 is not None and V1_ROOT.is_dir():
        candidate = V1_ROOT / v1.lstrip("/")
        if _usable(candidate):
            _sweep(candidate)
            return candidate
    v2 = _own_path(None)
    if v2 is not None:
        for root in V2_ROOTS:
            candidate = root / v2.lstrip("/")
            controls = candidate / "cgroup.subtree_control"
            try:
                if "pids" in controls.read_text().split() and _usable(candidate):
                    _sweep(candidate)
                    return candidate
            except OSError:
                continue
    return None


_pending: set[Path] = set()
_pending_lock = threading.Lock()


@atexit.register
def _remove_pending() -> None:
    """At exit, give the kernel a moment to release the last children, then remove their cgroups."""
    with _pending_lock:
        left = list(_pending)
    end = time.monotonic() + 1.0
    for path in left:
        while time.monotonic() < end:
            try:
                path.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.02)


_idle: list[Path] = []  # empty cgroups of this process, kept for the next child


def _empty(path: Path) -> bool:
    try:
        return not (path / "cgroup.procs").read_text().strip()
    except OSError:
        return False


class ChildCgroup:
    """One child's cgroup: taken before it starts, given back once it is empty.

    Making a cgroup costs milliseconds, so an empty one is kept and reused for
    the next child of this process; only empty ones are ever reused, and all
    are removed at exit."""

    def __init__(self, path: Path, max_pids: int) -> None:
        self.path = path
        (self.path / "pids.max").write_text(str(max_pids))

    @classmethod
    def take(cls, parent: Path, max_pids: int) -> ChildCgroup:
        with _pending_lock:
            while _idle:
                path = _idle.pop()
                if path.parent == parent and _empty(path):
                    return cls(path, max_pids)
        path = parent / f"hugind-{os.getpid()}-{next(_counter)}"
        path.mkdir()
        with _pending_lock:
            _pending.add(path)
        return cls(path, max_pids)

    @property
    def procs(self) -> str:
        return str(self.path / "cgroup.procs")

    def kill(self) -> None:
        """SIGKILL whatever is still in the cgroup: the child is done, and nothing it started
        may outlive it (without a PID namespace, a ``setsid`` child would). cgroup v2 kills
        the whole cgroup at once (``cgroup.kill``); v1 lists it (``cgroup.procs``, the
        kernel's own list), killed until empty, each round catching what forked meanwhile."""
        try:
            (self.path / "cgroup.kill").write_text("1")
            return
        except OSError:
            pass
        for _ in range(KILL_ROUNDS):
            try:
                pids = [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
            except (OSError, ValueError):
                return
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)

    def give_back(self) -> None:
        """Keep the cgroup for the next child once the kernel has released this one's processes."""
        self.kill()
        if _empty(self.path):
            with _pending_lock:
                _idle.append(self.path)
            return
        threading.Thread(target=self._wait_empty, name="hugind-cgroup", daemon=True).start()

    def _wait_empty(self) -> None:
        for _ in range(100):
            if _empty(self.path):
                with _pending_lock:
                    _idle.append(self.path)
                return
            time.sleep(0.05)
        # Still busy after 5 s: never reused; the exit handler or the next hugind's sweep removes it.
