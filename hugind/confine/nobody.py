"""Children as ``nobody`` on the host when hugind runs as root.

Standalone (standard library only), imported by the launcher before it makes
its namespaces. A child of a root-run hugind would otherwise be uid 0 on the
host: without capabilities, but a file it leaves, or a process it reaches past
the sandbox, would belong to root. Here the child's user namespace maps its
uid 0 to the host's 65534, and every granted root is shown through an
idmapped mount (``mount_setattr(MOUNT_ATTR_IDMAP)``, Linux 5.12+) with that
same mapping: files owned by root look owned by the child and what it creates
is stored as root's, so the user's files keep their owner, while the process
itself holds nothing of root's on the host.

Only root may write such a map or idmap a mount, so both happen here, before
the launcher joins the namespace (``setns``) and drops root's groups. Paths
are opened as root too: the child cannot traverse a 0700 parent (``/root``)
that root could, and the launcher binds from these descriptors.
"""

from __future__ import annotations

import ctypes
import os

NOBODY = 65534
CLONE_NEWUSER = 0x10000000
SYS_OPEN_TREE = 428
SYS_MOUNT_SETATTR = 442
OPEN_TREE_CLONE = 1
OPEN_TREE_CLOEXEC = os.O_CLOEXEC
AT_RECURSIVE = 0x8000
AT_EMPTY_PATH = 0x1000
AT_SYMLINK_NOFOLLOW = 0x100
MOUNT_ATTR_IDMAP = 0x00100000
PR_SET_PDEATHSIG = 1


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _error(what: str) -> OSError:
    err = ctypes.get_errno()
    return OSError(err, f"{what}: {os.strerror(err)}")


def make_userns() -> int:
    """A user namespace whose uid and gid 0 are the host's 65534; returns a descriptor of it.

    A process may not widen its own map, so a short-lived child makes the namespace
    and this process (root, outside it) writes the map, as newuidmap does."""
    libc = _libc()
    ready_r, ready_w = os.pipe()
    hold_r, hold_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(ready_r)
            os.close(hold_w)
            libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)
            os.write(ready_w, b"1" if libc.unshare(CLONE_NEWUSER) == 0 else b"0")
            os.read(hold_r, 1)  # held until the map is written and the namespace opened
        finally:
            os._exit(0)
    os.close(ready_w)
    os.close(hold_r)
    try:
        if os.read(ready_r, 1) != b"1":
            raise OSError(0, "cannot make a user namespace for the child")
        _write(f"/proc/{pid}/uid_map", f"0 {NOBODY} 1")
        _write(f"/proc/{pid}/gid_map", f"0 {NOBODY} 1")
        return os.open(f"/proc/{pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.close(ready_r)
        os.close(hold_w)
        os.waitpid(pid, 0)


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def clone(path: str) -> int:
    """A detached copy of the mount tree at ``path`` (not following a final link): unlike a
    path or an ``O_PATH`` descriptor, it can be attached in the mount namespace made later."""
    flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW
    fd = _libc().syscall(SYS_OPEN_TREE, -100, path.encode(), flags)
    if fd < 0:
        raise _error(f"open_tree({path})")
    return fd


def idmapped(path: str, userns: int) -> int:
    """:func:`clone`, shown through ``userns``'s map. Raises OSError when the file system
    cannot be idmapped."""
    libc = _libc()
    fd = clone(path)
    attr = _MountAttr(MOUNT_ATTR_IDMAP, 0, 0, userns)
    if libc.syscall(SYS_MOUNT_SETATTR, fd, b"", AT_EMPTY_PATH | AT_RECURSIVE, ctypes.byref(attr), ctypes.sizeof(attr)):
        err = _error(f"idmapping {path}")
        os.close(fd)
        raise err
    return fd


def open_grants(read: list[str], write: list[str], userns: int) -> dict[str, int]:
    """Each granted path as a detached mount tree, cloned as root.

    Writable roots must be idmapped (the child could not write root's files
    otherwise): one that cannot be is an error naming it. A read root that cannot be
    (a tree holding /proc, a file system without idmap support) is bound as it is,
    and its files are read with the permissions of others."""
    grants: dict[str, int] = {}
    for path in write:
        try:
            grants[path] = idmapped(path, userns)
        except FileNotFoundError:
            continue
        except OSError as exc:
            message = f"cannot show writable root {path} to an unprivileged child: {exc.strerror}"
            raise OSError(exc.errno, message) from None
    for path in read:
        try:
            grants[path] = idmapped(path, userns)
        except FileNotFoundError:
            continue
        except OSError:
            try:
                grants[path] = clone(path)
            except OSError:
                continue  # vanished or unreachable: nothing to grant
    return grants


def enter(userns: int) -> None:
    """Join ``userns`` as its uid/gid 0 (the host's 65534), with no supplementary group."""
    libc = _libc()
    if libc.setns(userns, CLONE_NEWUSER) != 0:
        raise _error("setns(user)")
    os.setgroups([])
    os.setresgid(0, 0, 0)
    os.setresuid(0, 0, 0)
