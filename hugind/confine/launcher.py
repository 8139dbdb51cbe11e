"""Start one program confined, without bubblewrap: ``python -I -S launcher.py SPEC -- ARGV``.

Runs as the child hugind starts (standard library only, ``-I -S`` keeps the
host's site-packages and environment out). In order:

1. join the child's pids cgroup; die with hugind (``PR_SET_PDEATHSIG``),
   checked against a race;
2. new user, mount, PID, network, IPC and UTS namespaces (``unshare``),
   mapping only the caller's own uid/gid; every mount becomes read-only,
   nosuid and nodev except bind mounts of the writable roots, so what
   Landlock does not cover (chmod, chown, timestamps) cannot touch files
   outside them either;
3. fork twice: a small init becomes PID 1 of the new PID namespace and
   the program PID 2 (so it keeps ordinary signal semantics); when the
   program ends, init exits and the kernel kills everything it left behind
   (``setsid``, double forks, daemons). Each level passes signals down and
   the exit status up;
4. rlimits, then Landlock (the plan's paths only; TCP and signals scoped);
5. exec the program.

Any failure is one line on stderr starting with ``hugind-confine:`` and
exit status 126, before the program runs. ``--probe`` does steps 1-3 with
``true`` to tell whether this machine allows them.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1
SYS_MOUNT_SETATTR = 442
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1
MOUNT_ATTR_NOSUID = 0x2
MOUNT_ATTR_NODEV = 0x4
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
EXIT_LAUNCH_FAILED = 126
DEVICES_RW = ("/dev/null", "/dev/zero", "/dev/full")
DEVICES_RO = ("/dev/urandom", "/dev/random")
RLIMITS = {
    "nproc": resource.RLIMIT_NPROC,
    "fsize": resource.RLIMIT_FSIZE,
    "cpu": resource.RLIMIT_CPU,
    "data": resource.RLIMIT_DATA,
    "nofile": resource.RLIMIT_NOFILE,
    "core": resource.RLIMIT_CORE,
}


class LaunchError(Exception):
    pass


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _die_with_parent(parent: int) -> None:
    _libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if parent and os.getppid() != parent:  # hugind died before prctl took effect
        os._exit(EXIT_LAUNCH_FAILED)


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _unshare() -> None:
    uid, gid = os.geteuid(), os.getegid()
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    if _libc().unshare(flags) != 0:
        err = ctypes.get_errno()
        raise LaunchError(f"unshare(user, mount, pid, net, ipc, uts) failed: {os.strerror(err)}")
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    except OSError as exc:
        raise LaunchError(f"cannot map the user namespace: {exc.strerror}") from None


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _mount_setattr(path: str, flags: int, attr_set: int, attr_clr: int) -> None:
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    attr = _MountAttr(attr_set, attr_clr, 0, 0)
    if libc.syscall(SYS_MOUNT_SETATTR, AT_FDCWD, path.encode(), flags, ctypes.byref(attr), ctypes.sizeof(attr)) != 0:
        raise LaunchError(f"mount_setattr({path}) failed: {os.strerror(ctypes.get_errno())}")


def _read_only_except(writable: list[str]) -> None:
    """Every mount read-only (nosuid, nodev), then each writable root bound writable again."""
    libc = _libc()
    if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        raise LaunchError(f"cannot make the mounts private: {os.strerror(ctypes.get_errno())}")
    flags = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
    _mount_setattr("/", AT_RECURSIVE, MOUNT_ATTR_RDONLY | flags, 0)
    if os.path.ismount("/dev"):  # /dev/null and friends must stay usable (Landlock picks which)
        _mount_setattr("/dev", AT_RECURSIVE, 0, MOUNT_ATTR_NODEV)
    for path in writable:
        if not os.path.exists(path):
            continue
        if libc.mount(path.encode(), path.encode(), None, MS_BIND | MS_REC, None) != 0:
            raise LaunchError(f"cannot bind {path}: {os.strerror(ctypes.get_errno())}")
        _mount_setattr(path, AT_RECURSIVE, flags, MOUNT_ATTR_RDONLY)


def _loopback_up() -> None:
    import fcntl
    import socket
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        req = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(sock, SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sh", b"lo", flags | IFF_UP))


def _fork_and_relay(*, reap_all: bool) -> None:
    """Fork. The child returns; the parent relays signals to it and exits with its status.

    ``reap_all``: the parent is PID 1 of the namespace, so it also reaps the
    orphans that are re-parented to it while it waits."""
    child = os.fork()
    if child == 0:
        _die_with_parent(0)
        return
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda signum, _frame: os.kill(child, signum))
    while True:
        try:
            pid, status = os.waitpid(-1 if reap_all else child, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(EXIT_LAUNCH_FAILED)
        if pid == child:
            break
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)


def _set_rlimits(limits: dict[str, int]) -> None:
    for name, value in limits.items():
        which = RLIMITS[name]
        _, hard = resource.getrlimit(which)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (cap, cap))


def _landlock(spec: dict) -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import landlock  # type: ignore[import-not-found]  # standalone sibling module

    abi = int(spec["landlock"])
    port = spec.get("tcp_port")
    ruleset = landlock.Ruleset(abi, restrict_tcp=spec.get("restrict_tcp", True), scope=True)
    hidden = [*spec.get("hide", []), "/proc", "/sys", "/dev"]
    for path in spec.get("read", []):
        for granted in landlock.carve(path, hidden):
            ruleset.allow_path(granted, landlock.READ)
    for path in spec.get("write", []):
        for granted in landlock.carve(path, hidden):
            ruleset.allow_path(granted, landlock.READ | landlock.write_access(abi))
    for device in DEVICES_RW:
        ruleset.allow_path(device, landlock.READ_FILE | landlock.WRITE_FILE)
    for device in DEVICES_RO:
        ruleset.allow_path(device, landlock.READ_FILE)
    if port and abi >= 4:
        ruleset.allow_tcp_port(int(port), landlock.NET_BIND_TCP | landlock.NET_CONNECT_TCP)
    ruleset.restrict_self()


def launch(spec: dict, argv: list[str]) -> None:
    if spec.get("cgroup_procs"):  # first: everything this process starts is counted
        _write(spec["cgroup_procs"], str(os.getpid()))
    _die_with_parent(int(spec.get("parent", 0)))
    if spec.get("namespaces"):
        _unshare()
        _read_only_except(list(spec.get("write", [])))
        if spec.get("loopback"):
            _loopback_up()
        _fork_and_relay(reap_all=False)  # this process stays outside the new PID namespace
        _fork_and_relay(reap_all=True)  # PID 1 of the namespace: a minimal init
    _set_rlimits(spec.get("rlimits", {}))
    if spec.get("landlock"):
        _landlock(spec)
    env = {k: v for k, v in os.environ.items() if k not in spec.get("env_drop", ())}
    try:
        os.execve(argv[0], argv, env)
    except OSError as exc:
        raise LaunchError(f"cannot execute {argv[0]}: {exc.strerror}") from None


def main(args: list[str]) -> None:
    try:
        if args[:1] == ["--probe"]:
            launch({"parent": os.getppid(), "namespaces": True}, ["/bin/true"])
        if len(args) < 3 or args[1] != "--":
            raise LaunchError("usage: launcher.py SPEC_JSON -- PROGRAM [ARGS...]")
        launch(json.loads(args[0]), args[2:])
    except (LaunchError, OSError, ValueError) as exc:
        os.write(2, f"hugind-confine: {exc}\n".encode(errors="replace"))
        os._exit(EXIT_LAUNCH_FAILED)


if __name__ == "__main__":
    main(sys.argv[1:])
