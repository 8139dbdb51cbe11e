"""The launcher's mount view: a new root that holds only what the plan grants.

Standalone (standard library only), imported by the launcher inside its new
user and mount namespaces, before it forks the program. It builds what
bubblewrap builds: a tmpfs root, the granted paths bound at their own places
(read-only, nosuid, nodev; writable roots without read-only), a private
``/tmp`` and ``/var/tmp`` (a tmpfs each, sized by the plan), a ``/dev`` with
only the harmless devices, an empty read-only ``/proc``, and hidden paths
covered (an empty read-only tmpfs over a directory, ``/dev/null`` over a
file); then ``pivot_root`` into it and the old root detached.

What is not granted does not exist in the view: Landlock cannot refuse a
``connect()`` to a named Unix socket (a session bus, a Docker socket), but a
socket that is not in the view cannot be named.
"""

from __future__ import annotations

import ctypes
import os

SYS_MOUNT_SETATTR = 442
SYS_PIVOT_ROOT = 155
SYS_MOVE_MOUNT = 429
MOVE_MOUNT_F_EMPTY_PATH = 0x4
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1
MOUNT_ATTR_NOSUID = 0x2
MOUNT_ATTR_NODEV = 0x4
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MNT_DETACH = 2
STAGING = "/tmp"  # where the new root is built (bubblewrap's choice): always a directory
TMP_DIRS = ("/tmp", "/var/tmp")
SPECIAL = ("/proc", "/dev", *TMP_DIRS)  # replaced at depth 1, before deeper binds
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")  # merged-/usr links
HIDDEN_WITH_ROOT = ("/sys", "/run")  # covered when "/" itself is granted (as bwrap_argv does)


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def fail(what: str) -> OSError:
    err = ctypes.get_errno()
    return OSError(err, f"{what} failed: {os.strerror(err)}")


def mount_setattr(
    path: str, flags: int, attr_set: int, attr_clr: int, *, dirfd: int = AT_FDCWD, userns: int = 0
) -> None:
    """``userns``: the namespace whose map an idmapped mount (``MOUNT_ATTR_IDMAP``) shows."""
    attr = _MountAttr(attr_set, attr_clr, 0, userns)
    if libc().syscall(SYS_MOUNT_SETATTR, dirfd, path.encode(), flags, ctypes.byref(attr), ctypes.sizeof(attr)):
        raise fail(f"mount_setattr({path or dirfd})")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = lambda v: v.encode() if v is not None else None  # noqa: E731
    if libc().mount(enc(source), enc(target), enc(fstype), flags, enc(data)) != 0:
        raise fail(f"mount {target}")


def _depth(path: str) -> int:
    return 0 if path == "/" else path.rstrip("/").count("/")


def _mountpoint(target: str, directory: bool) -> None:
    if os.path.lexists(target):
        return
    if directory:
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600))


def move_mount(fd: int, target: str) -> None:
    """Attach the detached mount tree ``fd`` (``open_tree(OPEN_TREE_CLONE)``) at ``target``."""
    if libc().syscall(SYS_MOVE_MOUNT, fd, b"", AT_FDCWD, target.encode(), MOVE_MOUNT_F_EMPTY_PATH):
        raise fail(f"move_mount to {target}")


def _bind(fd: int, target: str, writable: bool, detached: bool = False) -> None:
    _mountpoint(target, os.path.isdir(f"/proc/self/fd/{fd}"))
    if detached:
        move_mount(fd, target)
    else:
        mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)
    flags = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
    if writable:
        mount_setattr(target, AT_RECURSIVE, flags, MOUNT_ATTR_RDONLY)
    else:
        mount_setattr(target, AT_RECURSIVE, flags | MOUNT_ATTR_RDONLY, 0)


def _empty_dir(target: str, data: str = "mode=0755,size=4k") -> None:
    _mountpoint(target, True)
    mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, data)
    mount_setattr(target, 0, MOUNT_ATTR_RDONLY, 0)


def _special(root: str, where: str, tmp_size: int, devices: dict[str, int]) -> None:
    target = root + where
    if where in TMP_DIRS:
        _mountpoint(target, True)
        mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={tmp_size}")
    elif where == "/dev":
        _mountpoint(target, True)
        mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k")
        for device, fd in devices.items():
            _mountpoint(root + device, False)
            mount(f"/proc/self/fd/{fd}", root + device, None, MS_BIND)
            mount_setattr(root + device, 0, MOUNT_ATTR_NOSUID, 0)
        mount_setattr(target, 0, MOUNT_ATTR_RDONLY, 0)
    else:  # /proc: the sandbox has none (what a command could learn there is the host's)
        _empty_dir(target)


def _open(path: str) -> int | None:
    try:
        return os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return None  # vanished or unreachable: nothing to grant


def make_root(
    read: list[str],
    write: list[str],
    hide: list[str],
    tmp_size: int,
    opened: dict[str, int] | None = None,
) -> list[str]:
    """Build the view and enter it (this process's mount namespace: its children's too).
    ``opened``: the granted paths as detached mount trees made before this namespace (see
    nobody.open_grants); a path not in it is not granted. Without it each path is opened
    here. Returns the private tmp dirs (writable: Landlock grants them too)."""
    cwd = os.getcwd()
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    binds = [(p, False) for p in read] + [(p, True) for p in write]
    # (depth, order): parents first; the special mounts first among depth 1.
    steps: list[tuple[tuple[int, int], str, int | None, bool]] = []
    for path, writable in binds:
        fd = _open(path) if opened is None else opened.pop(path, None)
        if fd is not None:
            steps.append(((_depth(path), 1), path, fd, writable))
    steps += [((1, 0), where, None, False) for where in SPECIAL]
    devices = {d: fd for d in DEVICES if (fd := _open(d)) is not None}
    links = [(d, os.readlink(d)) for d in SYSTEM_LINKS if os.path.islink(d)]
    root = STAGING
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    tmp_dirs = []
    for _, path, fd, writable in sorted(steps, key=lambda s: s[0]):
        if fd is None:
            _special(root, path, tmp_size, devices)
            if path in TMP_DIRS:
                tmp_dirs.append(path)
        else:
            _bind(fd, root + path if path != "/" else root, writable, detached=opened is not None)
    if any(p == "/" for p, _ in binds):
        for path in HIDDEN_WITH_ROOT:
            if os.path.isdir(root + path):
                _empty_dir(root + path)
    for path in hide:
        target = root + path
        if not os.path.lexists(target):
            continue
        if os.path.isdir(target) and not os.path.islink(target):
            _empty_dir(target)
        else:
            mount(f"/proc/self/fd/{devices['/dev/null']}", target, None, MS_BIND)
            mount_setattr(target, 0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0)
    for link, target in links:
        if not os.path.lexists(root + link):
            os.symlink(target, root + link)
    if not any(p == "/" for p, _ in binds):
        mount_setattr(root, 0, MOUNT_ATTR_RDONLY, 0)
    for _, _, fd, _ in steps:
        if fd is not None:
            os.close(fd)
    for fd in devices.values():
        os.close(fd)
    _pivot(root)
    os.chdir(cwd)
    return tmp_dirs


def _pivot(root: str) -> None:
    """``root`` becomes "/"; the old root is detached (pivot_root(".", ".") then umount)."""
    os.chdir(root)
    c = libc()
    if c.syscall(SYS_PIVOT_ROOT, b".", b".") != 0:
        raise fail("pivot_root")
    if c.umount2(b".", MNT_DETACH) != 0:
        raise fail("detaching the old root")
    os.chdir("/")
