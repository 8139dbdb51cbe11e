"""Start one program confined, without bubblewrap: ``python -I -S launcher.py SPEC -- ARGV``.

Runs as the child hugind starts (standard library only, ``-I -S`` keeps the
host's site-packages and environment out). The spec is a list of ``KEY VALUE``
arguments before ``--`` (``read /usr read /etc rlimit nproc=256 ...``): each
value its own argument, so any path passes as is, and no JSON parser to import
(``json`` alone would cost more than a third of this script's start). In order:

1. join the child's pids cgroup; die with hugind (``PR_SET_PDEATHSIG``),
   checked against a race;
2. new user, mount, PID, network, IPC and UTS namespaces (``unshare``),
   mapping only the caller's own uid/gid (as root, with ``nobody 1``: a
   user namespace whose root is the host's nobody, the granted paths
   idmapped to it, see ``nobody.py``); then a new root holding only the
   plan's paths (``mounts.py``: read roots read-only, writable roots
   writable, all nosuid and nodev, a private /tmp and /var/tmp, a minimal
   /dev, hidden paths covered), as bubblewrap builds it: what Landlock does
   not cover (chmod, chown, timestamps, connect() to a named Unix socket)
   cannot reach anything outside the view either;
3. fork twice: a small init becomes PID 1 of the new PID namespace and
   the program PID 2 (so it keeps ordinary signal semantics); when the
   program ends, init exits and the kernel kills everything it left behind
   (``setsid``, double forks, daemons). Each level passes signals down and
   the exit status up;
4. rlimits, then Landlock (the plan's paths only; TCP and signals scoped);
5. no capabilities left (bounding and ambient sets emptied, ``SECBIT_NOROOT``
   locked, so uid 0 of the namespace gains none at exec), then hugind's
   seccomp filter (read from hugind's sealed memfd in step 1, loaded with one
   ``prctl``), and exec the program.

(Inside a bubblewrap sandbox, ``limits.py`` alone sets the rlimits.)

Any failure is one line on stderr starting with ``hugind-confine:`` and
exit status 126, before the program runs. ``--probe`` does steps 1-3 with
``true`` to tell whether this machine allows them; ``--probe DIR`` does them
as nobody, with ``DIR`` writable.
"""

from __future__ import annotations

import _signal as signal  # the C module: signal.py pulls in enum (a third of this start)
import ctypes
import errno
import os
import sys
from types import ModuleType

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1
TMP_SIZE = 512 << 20  # bytes, when the spec says none
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
PR_SET_SECUREBITS = 28
# NOROOT, NO_SETUID_FIXUP, KEEP_CAPS off, NO_CAP_AMBIENT_RAISE: each with its lock bit.
SECURE_BITS = 0x1 | 0x2 | 0x4 | 0x8 | 0x20 | 0x40 | 0x80
CAP_VERSION_3 = 0x20080522
MAX_CAP = 63
EXIT_LAUNCH_FAILED = 126
DEVICES_RW = ("/dev/null", "/dev/zero", "/dev/full")
DEVICES_RO = ("/dev/urandom", "/dev/random")


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


def _unshare(user: bool = True) -> None:
    """``user``: a new user namespace mapping the caller's own ids (False: the caller has
    joined one already, see nobody.py)."""
    uid, gid = os.geteuid(), os.getegid()
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    if _libc().unshare(flags | (CLONE_NEWUSER if user else 0)) != 0:
        err = ctypes.get_errno()
        raise LaunchError(f"unshare(user, mount, pid, net, ipc, uts) failed: {os.strerror(err)}")
    if not user:
        return
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    except OSError as exc:
        raise LaunchError(f"cannot map the user namespace: {exc.strerror}") from None


def _loopback_up() -> None:
    import _socket as socket  # as signal above: socket.py imports enum
    import fcntl
    import struct

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        req = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(sock.fileno(), SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(sock.fileno(), SIOCSIFFLAGS, struct.pack("16sh", b"lo", flags | IFF_UP))
    finally:
        sock.close()


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


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def read_filter(path: str) -> bytes:
    """hugind's compiled filter, from its sealed memfd (opened while hugind's /proc is visible)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise LaunchError(f"cannot read the seccomp filter: {exc.strerror}") from None
    if not data or len(data) % 8:
        raise LaunchError("the seccomp filter is not a BPF program")
    return data


def load_filter(data: bytes) -> None:
    """Install ``data`` (a BPF program of ``struct sock_filter``) on this thread and what it execs."""
    libc = _libc()
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise LaunchError(f"prctl(NO_NEW_PRIVS) failed: {os.strerror(ctypes.get_errno())}")
    buf = ctypes.create_string_buffer(data, len(data))
    prog = _SockFprog(len(data) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise LaunchError(f"cannot load the seccomp filter: {os.strerror(ctypes.get_errno())}")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> None:
    """No capability now, none at exec: uid 0 of a user namespace would otherwise hold them
    all over the sandbox's own processes (its worker's socket, its limits)."""
    libc = _libc()
    if libc.prctl(PR_SET_SECUREBITS, SECURE_BITS, 0, 0, 0) != 0 and ctypes.get_errno() != errno.EPERM:
        raise LaunchError(f"cannot lock the securebits: {os.strerror(ctypes.get_errno())}")
    for cap in range(MAX_CAP + 1):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() not in (errno.EINVAL, errno.EPERM):
            raise LaunchError(f"cannot drop capability {cap}: {os.strerror(ctypes.get_errno())}")
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    data = (_CapData * 2)()
    if libc.capset(ctypes.byref(_CapHeader(CAP_VERSION_3, 0)), data) != 0:
        raise LaunchError(f"cannot drop capabilities: {os.strerror(ctypes.get_errno())}")
    if libc.capget(ctypes.byref(_CapHeader(CAP_VERSION_3, 0)), data) != 0 or any(
        d.effective or d.permitted or d.inheritable for d in data
    ):
        raise LaunchError("capabilities remain after dropping them")


def _sibling(name: str) -> ModuleType:
    """A sibling module (landlock, mounts), loaded before the mounts change (this file may
    live under /tmp)."""
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.path[:1] != [here]:
        sys.path.insert(0, here)
    return __import__(name)


def _landlock(spec: dict, landlock: ModuleType) -> None:
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


def _become_nobody(spec: dict) -> dict[str, int]:
    """As root: the granted paths opened (idmapped), then this process joins a user
    namespace whose root is the host's nobody (see nobody.py)."""
    nobody = _sibling("nobody")
    try:
        userns = nobody.make_userns()
        opened = nobody.open_grants(spec.get("read", []), spec.get("write", []), userns)
        nobody.enter(userns)
    except OSError as exc:
        raise LaunchError(f"cannot run the child as nobody: {exc.strerror or exc}") from None
    os.close(userns)
    return opened


def launch(spec: dict, argv: list[str]) -> None:
    if spec.get("cgroup_procs"):  # first: everything this process starts is counted
        _write(spec["cgroup_procs"], str(os.getpid()))
    _die_with_parent(int(spec.get("parent", 0)))
    bpf = read_filter(spec["seccomp"]) if spec.get("seccomp") else None
    limits = _sibling("limits")  # siblings now: the view built below may not hold this directory
    landlock = _sibling("landlock") if spec.get("landlock") else None
    if spec.get("namespaces"):
        mounts = _sibling("mounts")
        opened = _become_nobody(spec) if spec.get("nobody") else None
        _unshare(user=opened is None)
        try:
            tmp = mounts.make_root(
                spec.get("read", []),
                spec.get("write", []),
                spec.get("hide", []),
                spec.get("tmp_size", TMP_SIZE),
                opened,
            )
        except OSError as exc:
            raise LaunchError(f"cannot build the sandbox's view: {exc.strerror or exc}") from None
        spec["write"] = [*spec.get("write", []), *tmp]
        if spec.get("loopback"):
            _loopback_up()
        _fork_and_relay(reap_all=False)  # this process stays outside the new PID namespace
        _fork_and_relay(reap_all=True)  # PID 1 of the namespace: a minimal init
    limits.set_rlimits(spec.get("rlimits", {}))
    if landlock is not None:
        _landlock(spec, landlock)
    if spec.get("drop_caps"):
        drop_capabilities()
    if bpf is not None:
        load_filter(bpf)  # last: the filter refuses calls the steps above make
    env = {k: v for k, v in os.environ.items() if k not in spec.get("env_drop", [])}
    try:
        os.execve(argv[0], argv, env)
    except OSError as exc:
        raise LaunchError(f"cannot execute {argv[0]}: {exc.strerror}") from None


LIST_KEYS = frozenset({"read", "write", "hide", "env_drop"})
INT_KEYS = frozenset(
    {"parent", "namespaces", "nobody", "loopback", "landlock", "restrict_tcp", "tcp_port", "drop_caps", "tmp_size"}
)


def parse_spec(args: list[str]) -> tuple[dict, list[str]]:
    """``KEY VALUE ... -- PROGRAM ARGS``: the spec, and the program's argv."""
    spec: dict = {key: [] for key in LIST_KEYS}
    spec["rlimits"] = {}
    i = 0
    while i < len(args) and args[i] != "--":
        if i + 1 >= len(args):
            raise LaunchError(f"spec key {args[i]!r} has no value")
        key, value = args[i], args[i + 1]
        if key in LIST_KEYS:
            spec[key].append(value)
        elif key in INT_KEYS:
            spec[key] = int(value)
        elif key == "rlimit":
            name, _, number = value.partition("=")
            spec["rlimits"][name] = int(number)
        elif key in ("cgroup_procs", "seccomp"):
            spec[key] = value
        else:
            raise LaunchError(f"unknown spec key {key!r}")
        i += 2
    if i >= len(args) or i + 1 >= len(args):
        raise LaunchError("usage: launcher.py KEY VALUE ... -- PROGRAM [ARGS...]")
    return spec, args[i + 1 :]


def main(args: list[str]) -> None:
    try:
        if args[:1] == ["--probe"]:  # --probe DIR: also as nobody (see nobody.py), DIR writable
            spec = {"parent": os.getppid(), "namespaces": True, "read": ["/"], "write": args[1:2], "hide": []}
            launch({**spec, "nobody": len(args) > 1}, ["/bin/true"])
        launch(*parse_spec(args))
    except Exception as exc:  # one line, never a traceback, and the program never runs
        os.write(2, f"hugind-confine: {exc}\n".encode(errors="replace"))
        os._exit(EXIT_LAUNCH_FAILED)


if __name__ == "__main__":
    main(sys.argv[1:])
