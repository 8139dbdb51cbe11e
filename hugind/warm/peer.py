"""Is the process at the other end of the socket in the same confinement as this one?

Both sides of a warm connection ask this of each other before anything of a
run is sent. ``context`` reads, from ``/proc``, everything that confines a
process and that a child forked by the server would otherwise not share with
the client: namespaces, cgroup, root directory, credentials, capabilities,
no-new-privs, seccomp, the LSM label, resource limits, niceness, scheduling
policy, OOM score adjustment, CPU and memory placement, audit login id. Any
difference refuses the warm path (a mismatch is not "narrower or wider": it
is simply not this process's context).

What ``/proc`` does not show is a Landlock domain. ``prove``/``verify`` cover
it: each side opens a file the other holds, through ``/proc/PID/fd/N``. That
open needs ptrace read access to the holder, and Landlock grants it only to a
process whose domain is the holder's or an ancestor of it; so when both
opens succeed the two processes are in the same domain. The file is a memfd
made for this one connection, so the proof cannot be replayed.
"""

import os
import stat
import sys
from _socket import SO_PEERCRED, SOL_SOCKET
from _socket import socket as _Socket  # socket.socket is a subclass: both sides pass theirs

NAMESPACES = ("cgroup", "ipc", "mnt", "net", "pid", "time", "user", "uts")
STATUS_FIELDS = (
    "Uid",
    "Gid",
    "Groups",
    "CapInh",
    "CapPrm",
    "CapEff",
    "CapBnd",
    "CapAmb",
    "NoNewPrivs",
    "Seccomp",
    "Seccomp_filters",
    "Cpus_allowed_list",
    "Mems_allowed_list",
)


class Mismatch(Exception):
    """The peer is not in this process's context; the message names what differs."""


def _read(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return "<absent>"
    except OSError as err:
        if err.errno == 22:  # EINVAL: attr/current without an LSM that labels processes
            return "<none>"
        raise


def _identity(path: str) -> str:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "<absent>"
    return f"{st.st_dev}:{st.st_ino}"


def context(pid: int | str) -> dict[str, str]:
    """What confines process ``pid`` ("self" for this one), as comparable strings.

    Raises OSError when it cannot be read (the process is gone, or this one may
    not inspect it): the caller refuses the peer then."""
    base = f"/proc/{pid}"
    found: dict[str, str] = {f"ns:{name}": _identity(f"{base}/ns/{name}") for name in NAMESPACES}
    found["root"] = _identity(f"{base}/root")
    status: dict[str, str] = {}
    for line in _read(f"{base}/status").splitlines():
        name, _, value = line.partition(":")
        status[name] = value.strip()
    for name in STATUS_FIELDS:
        found[name] = status.get(name, "<absent>")
    found["TracerPid"] = status.get("TracerPid", "<absent>")
    found["cgroup"] = _read(f"{base}/cgroup")
    found["lsm"] = _read(f"{base}/attr/current")
    found["limits"] = _read(f"{base}/limits")
    found["oom_score_adj"] = _read(f"{base}/oom_score_adj").strip()
    found["loginuid"] = _read(f"{base}/loginuid").strip()
    number = os.getpid() if pid == "self" else int(pid)
    found["nice"] = str(os.getpriority(os.PRIO_PROCESS, number))
    found["scheduler"] = str(os.sched_getscheduler(number))
    return found


def peer_pid(sock: _Socket) -> int:
    """The pid at the other end of a connected Unix socket, refused unless it runs as this
    process's effective user (SO_PEERCRED: the credentials it had when it connected)."""
    creds = sock.getsockopt(SOL_SOCKET, SO_PEERCRED, 12)  # struct ucred: pid, uid, gid
    pid, uid = int.from_bytes(creds[0:4], sys.byteorder), int.from_bytes(creds[4:8], sys.byteorder)
    if uid != os.geteuid():
        raise Mismatch("the peer runs as another user")
    return pid


def umask_of(pid: int) -> int:
    for line in _read(f"/proc/{pid}/status").splitlines():
        if line.startswith("Umask:"):
            return int(line.split()[1], 8)
    raise Mismatch("no umask in /proc status")


def compare(mine: dict[str, str], theirs: dict[str, str]) -> None:
    """Raise Mismatch naming the first difference (a traced peer never matches)."""
    if theirs.get("TracerPid") != "0":
        raise Mismatch("the peer is being traced")
    for name, value in mine.items():
        if name != "TracerPid" and theirs.get(name) != value:
            raise Mismatch(f"{name} differs")


def proof_file() -> int:
    """A file only this connection knows, for the peer to open through /proc."""
    return os.memfd_create("hugind-warm-proof", os.MFD_CLOEXEC)


def prove(peer_pid: int, peer_fd: int) -> int:
    """Open the peer's proof file as only a process allowed to inspect the peer can.

    The peer names the descriptor, so it could name a FIFO (an open that waits for a
    writer forever) or a device: only a regular file is opened, and never so as to block."""
    path = f"/proc/{peer_pid}/fd/{peer_fd}"
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise Mismatch("the proof named something that is not a file")
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise Mismatch("the proof named something that is not a file")
    return fd


def verify(mine: int, answer: int) -> None:
    a, b = os.fstat(mine), os.fstat(answer)
    if (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino):
        raise Mismatch("the peer's proof is not this connection's file")
