"""Try system calls with arguments that fail harmlessly when the call is allowed.

Standard library only (it runs inside the sandboxes, with ``python3 -I -S``).
Each attempt prints one line ``NAME ERRNO`` (``OK`` when it succeeded): a call
the filter refuses gets the filter's errno (EPERM, ENOSYS, EAFNOSUPPORT), a
call the kernel reached gets the error its bad arguments earn (EBADF, EFAULT,
EINVAL, ESRCH...), so the two cannot be confused (Flatpak's try-syscall).

Usage: try_syscall.py [NAME ...]   (default: every attempt)
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys

NR = {  # x86_64
    "ptrace": 101,
    "process_vm_readv": 310,
    "pidfd_open": 434,
    "pidfd_getfd": 438,
    "prlimit64": 302,
    "keyctl": 250,
    "userfaultfd": 323,
    "perf_event_open": 298,
    "mount": 165,
    "umount2": 166,
    "fsopen": 430,
    "open_tree": 428,
    "pivot_root": 155,
    "chroot": 161,
    "unshare": 272,
    "setns": 308,
    "clone": 56,
    "clone3": 435,
    "openat2": 437,
    "io_uring_setup": 425,
    "socket": 41,
    "fchmodat": 268,
    "kcmp": 312,
}
CLONE_NEWUSER = 0x10000000
CLONE_THREAD = 0x00010000
AF_NETLINK = 16
SOCK_RAW = 3
PTRACE_PEEKDATA = 2
NO_SUCH_PID = 0x3FFFFFF0
RLIMIT_BOGUS = 4096
AT_FDCWD = -100

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def _call(name: str, *args: int | None) -> int:
    return libc.syscall(NR[name], *(ctypes.c_long(a) if isinstance(a, int) else a for a in args))


# name -> the call, with arguments the kernel rejects (the comment: its answer when allowed)
ATTEMPTS = {
    "ptrace": lambda: _call("ptrace", PTRACE_PEEKDATA, NO_SUCH_PID, 0, 0),  # ESRCH
    "process_vm_readv": lambda: _call("process_vm_readv", NO_SUCH_PID, 0, 0, 0, 0, 0),  # ESRCH
    "pidfd_open": lambda: _call("pidfd_open", NO_SUCH_PID, 0),  # ESRCH
    "pidfd_getfd": lambda: _call("pidfd_getfd", -1, 0, 0),  # EBADF
    "prlimit64_other": lambda: _call("prlimit64", 1, RLIMIT_BOGUS, 0, 0),  # EINVAL
    "prlimit64_self": lambda: _call("prlimit64", 0, RLIMIT_BOGUS, 0, 0),  # EINVAL: never filtered
    "keyctl": lambda: _call("keyctl", 0x7FFF, 0, 0, 0, 0),  # EOPNOTSUPP
    "userfaultfd": lambda: _call("userfaultfd", -1),  # EINVAL
    "perf_event_open": lambda: _call("perf_event_open", 0, 0, -1, -1, 0),  # EFAULT
    "mount": lambda: _call("mount", 0, 0, 0, 0, 0),  # EFAULT (with CAP_SYS_ADMIN)
    "umount2": lambda: _call("umount2", 0, 0),  # EFAULT (with CAP_SYS_ADMIN)
    "fsopen": lambda: _call("fsopen", 0, 0),  # EFAULT (with CAP_SYS_ADMIN)
    "open_tree": lambda: _call("open_tree", -1, 0, 0),  # EFAULT / EBADF
    "pivot_root": lambda: _call("pivot_root", 0, 0),  # EFAULT (with CAP_SYS_ADMIN)
    "chroot": lambda: _call("chroot", 0),  # EFAULT
    "unshare": lambda: _call("unshare", 0x1),  # EINVAL: not a namespace flag
    "setns": lambda: _call("setns", -1, 0),  # EBADF
    "clone_newuser": lambda: _call("clone", CLONE_NEWUSER | CLONE_THREAD, 0, 0, 0, 0),  # EINVAL
    "clone3": lambda: _call("clone3", 0, 0),  # EINVAL (size too small)
    "openat2": lambda: _call("openat2", AT_FDCWD, 0, 0, 0),  # EFAULT / E2BIG
    "io_uring_setup": lambda: _call("io_uring_setup", 0, 0),  # EFAULT / EINVAL
    "socket_netlink": lambda: _call("socket", AF_NETLINK, SOCK_RAW, 0),  # a socket (OK)
    "kcmp": lambda: _call("kcmp", NO_SUCH_PID, NO_SUCH_PID, 0, 0, 0),  # ESRCH
}


def attempt(name: str) -> str:
    ctypes.set_errno(0)
    result = ATTEMPTS[name]()
    if result >= 0:
        if name == "socket_netlink":
            os.close(result)
        return "OK"
    return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))


def main(names: list[str]) -> None:
    for name in names or list(ATTEMPTS):
        print(name, attempt(name), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
