"""Open a path beneath a directory without following links: ``openat2``, or the same walk by hand.

Paths hugind opens on someone else's word (a guest's ``fs.*`` call, once the
policy resolved it; a lock or log in a folder a cloned repository controls)
must not lead anywhere else through a link swapped in after a check. Linux
5.6+ does that in one call: ``openat2(dirfd, path, &how, sizeof how)`` with

* ``RESOLVE_BENEATH``: nothing outside ``dirfd`` (``..`` above it, an absolute
  path, an absolute symlink): ``EXDEV``;
* ``RESOLVE_NO_MAGICLINKS``: no ``/proc/PID/fd/N``-style link, which names an
  object, not a path: ``ELOOP``;
* ``RESOLVE_NO_SYMLINKS`` (unless the caller asks to follow links beneath
  the directory): no symlink on any component: ``ELOOP``.

Whether the kernel has it (an old kernel, or a seccomp filter refusing it as
hugind's own children's does) is asked once per process (:func:`available`);
without it :func:`walk_beneath` opens one component at a time with
``O_NOFOLLOW`` from the directory down and applies the same rules itself,
with the same errno for each refusal. tests/host/test_openat2.py runs both over
the same attack cases and compares.

Linux only (the number 437 is the same on every architecture: a syscall
added after the tables were unified).
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import stat
from typing import Any

SYS_OPENAT2 = 437
AT_FDCWD = -100
RESOLVE_NO_XDEV = 0x01
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
BENEATH = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS
NO_LINKS = BENEATH | RESOLVE_NO_SYMLINKS
MAX_LINKS = 40  # the kernel's MAXSYMLINKS: one more is ELOOP
PROC_SUPER_MAGIC = 0x9FA0
_PATH = getattr(os, "O_PATH", 0)
_STEP = _PATH | os.O_NOFOLLOW | os.O_CLOEXEC  # a component as it is, link or not


class OpenHow(ctypes.Structure):
    """``struct open_how`` (linux/openat2.h): three u64, 24 bytes (OPEN_HOW_SIZE_VER0)."""

    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_syscall: Any = None
_libc: Any = None
try:
    if os.uname().sysname == "Linux":
        _libc = ctypes.CDLL(None, use_errno=True)
        _syscall = _libc.syscall
        _syscall.restype = ctypes.c_long
except OSError:  # no libc to load: the walk it is
    _syscall = None


def _call(dir_fd: int, path: str | bytes, flags: int, resolve: int, mode: int) -> int:
    tmpfile = getattr(os, "O_TMPFILE", 0)  # it holds O_DIRECTORY's bit: compared whole
    creates = bool(flags & os.O_CREAT) or (tmpfile and flags & tmpfile == tmpfile)
    how = OpenHow(flags | os.O_CLOEXEC, mode if creates else 0, resolve)  # a mode without them is EINVAL
    fd = _syscall(
        ctypes.c_long(SYS_OPENAT2),
        ctypes.c_int(dir_fd),
        ctypes.c_char_p(os.fsencode(path)),
        ctypes.byref(how),
        ctypes.c_size_t(ctypes.sizeof(how)),
    )
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), os.fsdecode(path))
    return int(fd)


@functools.lru_cache(maxsize=1)
def available() -> bool:
    """Whether this process can call ``openat2`` with the flags above (asked once)."""
    if _syscall is None:
        return False
    try:
        root = os.open("/", os.O_DIRECTORY | _PATH | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        os.close(_call(root, ".", os.O_DIRECTORY | _PATH, NO_LINKS, 0))
    except OSError:
        return False  # ENOSYS (before 5.6), EPERM or ENOSYS from a seccomp filter, E2BIG...
    finally:
        os.close(root)
    return True


def openat2(dir_fd: int, path: str | bytes, flags: int, resolve: int, mode: int = 0) -> int:
    """The kernel's ``openat2`` (close-on-exec always). OSError as the kernel says, ENOSYS
    when it cannot be called here."""
    if not available():
        raise OSError(errno.ENOSYS, "openat2 is not available here", os.fsdecode(path))
    return _call(dir_fd, path, flags, resolve, mode)


def open_beneath(dir_fd: int, path: str | bytes, flags: int, mode: int = 0o666, *, follow: bool = False) -> int:
    """``path`` (relative) opened beneath ``dir_fd``: never outside it (EXDEV), never through
    a magic link (ELOOP), and unless ``follow``, through no symlink at all (ELOOP). By the
    kernel where it can, else by :func:`walk_beneath`."""
    if available():
        return _call(dir_fd, path, flags, BENEATH if follow else NO_LINKS, mode)
    return walk_beneath(dir_fd, path, flags, mode, follow=follow)


def open_nofollow(path: str | bytes, flags: int, mode: int = 0o666) -> int:
    """An absolute ``path`` opened with no symlink or magic link on any component (the
    path as named is the object opened). One ``openat2`` from the cwd's ``AT_FDCWD``
    (beneath ``/`` nothing can lead outside, so RESOLVE_BENEATH would add nothing), else
    the walk from a descriptor of ``/`` opened for this call."""
    name = os.fsdecode(path)
    if not name.startswith("/"):
        raise OSError(errno.EINVAL, "not an absolute path", name)
    if available():
        return _call(AT_FDCWD, name, flags, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, mode)
    root = os.open("/", os.O_DIRECTORY | _PATH | os.O_CLOEXEC)
    try:
        return walk_beneath(root, name.lstrip("/") or ".", flags, mode)
    finally:
        os.close(root)


def open_in(directory: str | os.PathLike[str], name: str, flags: int, mode: int = 0o666) -> int:
    """``name`` beneath ``directory``, no link followed below it; ``directory`` itself must
    not be a symlink either (its parents are the caller's choice)."""
    fd = os.open(directory, os.O_DIRECTORY | os.O_NOFOLLOW | _PATH | os.O_CLOEXEC)
    try:
        return open_beneath(fd, name, flags, mode)
    finally:
        os.close(fd)


def _refuse(code: int, path: str) -> OSError:
    return OSError(code, os.strerror(code), path)


class _Statfs(ctypes.Structure):
    """The head of ``struct statfs``: ``f_type`` first (a long), the rest left unread."""

    _fields_ = [("f_type", ctypes.c_long), ("rest", ctypes.c_byte * 120)]


def _is_magic(link_fd: int, target: str) -> bool:
    """A link of procfs that names an object (fd/N, exe, cwd, root, ns/*, map_files/*):
    its target is absolute or ``type:[inode]``; procfs's ordinary links (self,
    thread-self, mounts...) are relative paths."""
    if not (target.startswith("/") or ":[" in target) or _syscall is None:
        return False
    buf = _Statfs()
    if _libc.fstatfs(ctypes.c_int(link_fd), ctypes.byref(buf)) != 0:
        return True  # cannot tell: refused, as the kernel would refuse a magic link
    return int(buf.f_type) & 0xFFFFFFFF == PROC_SUPER_MAGIC


def walk_beneath(dir_fd: int, path: str | bytes, flags: int, mode: int = 0o666, *, follow: bool = False) -> int:
    """:func:`open_beneath` by hand: one ``O_NOFOLLOW`` open per component from ``dir_fd``,
    a stack of the directories passed (``..`` pops one; popping ``dir_fd`` is EXDEV), a
    symlink refused (ELOOP) or, with ``follow``, its target spliced in (absolute: EXDEV;
    a magic link: ELOOP; more than MAX_LINKS: ELOOP)."""
    name = os.fsdecode(path)
    if not name:
        raise _refuse(errno.ENOENT, name)
    if name.startswith("/"):
        raise _refuse(errno.EXDEV, name)
    if name.split("/")[-1] in ("", ".", ".."):  # "a/", "a/.": a must be a directory
        flags |= os.O_DIRECTORY
    # With O_NOFOLLOW of its own the caller wants a trailing link itself, as the kernel gives it.
    trailing_link_ok = bool(flags & os.O_NOFOLLOW)
    todo = [p for p in name.split("/") if p not in ("", ".")]
    stack: list[int] = []  # directories opened below dir_fd, innermost last
    links = 0
    try:
        while True:
            here = stack[-1] if stack else dir_fd
            if not todo:  # the path named the directory reached itself
                return os.open(".", flags | os.O_CLOEXEC, mode, dir_fd=here)
            part = todo.pop(0)
            if part == "..":
                if not stack:
                    raise _refuse(errno.EXDEV, name)
                os.close(stack.pop())
                continue
            if not todo:  # the last component: the caller's own open, never through a link
                fd = _open_last(here, part, flags, mode, trailing_link_ok)
                if fd is not None:
                    return fd
            fd = os.open(part, _STEP, dir_fd=here)
            st = os.fstat(fd)
            if stat.S_ISLNK(st.st_mode):
                try:
                    target = os.readlink("", dir_fd=fd) if _PATH else os.readlink(part, dir_fd=here)
                    magic = _is_magic(fd, target)
                finally:
                    os.close(fd)
                links += 1
                if not follow or magic or links > MAX_LINKS:
                    raise _refuse(errno.ELOOP, name)
                if target.startswith("/"):
                    raise _refuse(errno.EXDEV, name)
                if not todo and target.split("/")[-1] in ("", ".", ".."):
                    flags |= os.O_DIRECTORY  # a last link to "dir/" or "..": a directory it must be
                todo[:0] = [p for p in target.split("/") if p not in ("", ".")]
                continue
            if not stat.S_ISDIR(st.st_mode):
                os.close(fd)
                raise _refuse(errno.ENOTDIR, name)
            stack.append(fd)
    finally:
        for fd in stack:
            os.close(fd)


def _open_last(dir_fd: int, part: str, flags: int, mode: int, trailing_link_ok: bool) -> int | None:
    """The last component opened as the caller asked, with O_NOFOLLOW; None when it is a
    link the walk must refuse or resolve (the caller goes on with it as a component)."""
    try:
        fd = os.open(part, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and not trailing_link_ok and _is_link(dir_fd, part):
            return None
        raise
    if not trailing_link_ok and flags & _PATH and stat.S_ISLNK(os.fstat(fd).st_mode):
        os.close(fd)  # O_PATH opens the link itself: the kernel would have gone through it
        return None
    return fd


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False
