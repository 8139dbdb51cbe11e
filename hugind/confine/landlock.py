"""Landlock through ctypes: restrict the calling process to a set of paths.

Standalone (standard library only): the launcher imports it inside a child
that runs with ``python -I -S``, before it executes the confined program.
A process restricted here, and everything it executes, can open only what a
rule grants; the restriction cannot be lifted, only narrowed further.

Landlock rules only add access, so a path to hide inside a granted tree is
handled by granting the tree's other entries instead (``carve``).
"""

from __future__ import annotations

import ctypes
import os

SYS_CREATE_RULESET = 444
SYS_ADD_RULE = 445
SYS_RESTRICT_SELF = 446
RULE_PATH_BENEATH = 1
RULE_NET_PORT = 2
PR_SET_NO_NEW_PRIVS = 38

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6
SCOPE_ABI = 6  # first ABI that scopes signals and abstract sockets

READ = EXECUTE | READ_FILE | READ_DIR
FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV


class LandlockError(OSError):
    pass


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPort(ctypes.Structure):
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi_version() -> int:
    return max(0, int(_libc().syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), 1)))


def handled_fs(abi: int) -> int:
    mask = (1 << 13) - 1  # ABI 1: EXECUTE .. MAKE_SYM
    if abi >= 2:
        mask |= REFER
    if abi >= 3:
        mask |= TRUNCATE
    if abi >= 5:
        mask |= IOCTL_DEV
    return mask


def write_access(abi: int) -> int:
    # Everything but making device nodes (which needs CAP_MKNOD anyway).
    return handled_fs(abi) & ~(MAKE_CHAR | MAKE_BLOCK)


def carve(root: str, hidden: list[str]) -> list[str]:
    """``root`` as a list of paths to grant that covers everything in it except ``hidden``.

    Each directory on the way from ``root`` to a hidden path is replaced by
    its entries (itself ungranted: it can be traversed, not listed)."""
    if any(root == h or root.startswith(h.rstrip("/") + "/") for h in hidden):
        return []  # the root itself is hidden, or lies inside what is
    inside = [h for h in hidden if h.startswith(root.rstrip("/") + "/")]
    if not inside:
        return [root]
    out: list[str] = []
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    for name in names:
        out += carve(os.path.join(root, name), inside)
    return out


class Ruleset:
    def __init__(self, abi: int, *, restrict_tcp: bool, scope: bool, handle_fs: bool = True) -> None:
        self.abi = abi
        self._libc = _libc()
        # handle_fs=False: a domain that only scopes (a zygote's command keeps its sandbox's files).
        attr = _RulesetAttr(handled_fs(abi) if handle_fs else 0, 0, 0)
        if restrict_tcp and abi >= 4:
            attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP
        if scope and abi >= 6:
            attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        size = ctypes.sizeof(attr) if abi >= 6 else 16
        fd = self._libc.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
        if fd < 0:
            raise LandlockError(ctypes.get_errno(), "landlock_create_ruleset failed")
        self.fd = int(fd)

    def allow_path(self, path: str, access: int) -> None:
        try:
            target = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return  # vanished or unreadable: nothing to grant
        try:
            if not os.path.isdir(path):
                access &= FILE_ONLY
            access &= handled_fs(self.abi)
            rule = _PathBeneath(access, target)
            if self._libc.syscall(SYS_ADD_RULE, self.fd, RULE_PATH_BENEATH, ctypes.byref(rule), 0) < 0:
                raise LandlockError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
        finally:
            os.close(target)

    def allow_tcp_port(self, port: int, access: int) -> None:
        rule = _NetPort(access, port)
        if self._libc.syscall(SYS_ADD_RULE, self.fd, RULE_NET_PORT, ctypes.byref(rule), 0) < 0:
            raise LandlockError(ctypes.get_errno(), f"landlock_add_rule failed for TCP port {port}")

    def restrict_self(self) -> None:
        if self._libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise LandlockError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if self._libc.syscall(SYS_RESTRICT_SELF, self.fd, 0) < 0:
            raise LandlockError(ctypes.get_errno(), "landlock_restrict_self failed")
        os.close(self.fd)
