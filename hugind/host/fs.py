"""``fs.*``: file operations, each after the policy has resolved and allowed the path.

The policy hands back the resolved host path. Acting on it, the directory
that holds it is opened with no symlink or magic link on any component
(``openat2`` with ``RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS``, or an
``O_NOFOLLOW`` walk where the kernel lacks it: :mod:`hugind.host.openat2`;
the path is absolute and already resolved, so no ``..`` or link can lead
outside a root once none is followed), and the last component with
``O_NOFOLLOW``, so a symlink swapped in after the check makes the call fail
instead of leading outside. Files are opened
non-blocking and must be regular files (a FIFO cannot hang a call); reads
and writes are capped (``LimitHit``). Results name paths the way the guest
sees them, never host paths outside the allowed roots.
"""

from __future__ import annotations

import base64
import errno
import os
import posixpath
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hugind.errors import HostCallError, HostIOError, InvalidArgument, LimitHit, NotFound, PermissionDenied
from hugind.host.openat2 import open_nofollow
from hugind.host.registry import HostContext, Op, arg, bytes_arg

MAX_LIST_ENTRIES = 100_000
MAX_COPY_ENTRIES = 10_000
CHUNK = 1 << 16

_PATH_FLAG = getattr(os, "O_PATH", 0) or os.O_RDONLY
_WALK = _PATH_FLAG | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
# For open_nofollow, which refuses every link itself (a trailing one included).
_WALK_FLAGS = _PATH_FLAG | os.O_DIRECTORY
_OPEN_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY


def _engine(ctx: HostContext) -> Any:
    if ctx.policy is None:
        raise PermissionDenied("filesystem: no policy is in force")
    return ctx.policy


@contextmanager
def _errors(op: str, shown: str) -> Iterator[None]:
    """Turn OS errors into guest errors that name the guest's path, not the host's."""
    try:
        yield
    except HostCallError:
        raise
    except FileNotFoundError:
        raise NotFound(f"fs.{op}: '{shown}' does not exist") from None
    except FileExistsError:
        raise HostIOError(f"fs.{op}: '{shown}' already exists") from None
    except IsADirectoryError:
        raise HostIOError(f"fs.{op}: '{shown}' is a directory") from None
    except NotADirectoryError:
        raise HostIOError(f"fs.{op}: '{shown}': a component is not a directory") from None
    except PermissionError:
        raise PermissionDenied(f"filesystem: the host refused {op} on '{shown}'") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PermissionDenied(f"filesystem: '{shown}' became a symlink after the check") from None
        if exc.errno == errno.ENOTEMPTY:
            raise HostIOError(f"fs.{op}: directory '{shown}' is not empty") from None
        raise HostIOError(f"fs.{op}: '{shown}': {exc.strerror or exc.__class__.__name__}") from None


def _walk(real: Path | str, *, last_readable: bool = False) -> int:
    """An fd for directory ``real``, with no symlink or magic link on any component
    (:func:`hugind.host.openat2.open_nofollow`: one ``openat2`` where the kernel has it,
    else an ``O_NOFOLLOW`` walk from ``/`` down). A link met on the way (a directory
    swapped for one after the check) is reported as what it is not: a directory."""
    try:
        return open_nofollow(str(real), _OPEN_DIR_FLAGS if last_readable else _WALK_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)) from None
        raise


@contextmanager
def _parent(real: Path) -> Iterator[tuple[int, str]]:
    """(fd of the parent directory, final name) of a resolved path."""
    head, name = os.path.split(str(real))  # str: pathlib's own parent/name cost more than the syscalls
    if not name:
        raise PermissionDenied("filesystem: refusing to act on '/' itself")
    fd = _walk(head)
    try:
        yield fd, name
    finally:
        os.close(fd)


def _lstat(real: Path | str) -> os.stat_result | None:
    head, name = os.path.split(str(real))
    if not name:
        return os.lstat("/")
    try:
        fd = _walk(head)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    finally:
        os.close(fd)


def _open_file(real: Path, flags: int) -> int:
    with _parent(real) as (dfd, name):
        fd = os.open(name, flags | _FILE, 0o666, dir_fd=dfd)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError
        if not stat.S_ISREG(st.st_mode):
            raise HostIOError("not a regular file")
        if flags & (os.O_WRONLY | os.O_RDWR) and st.st_nlink > 1:
            raise PermissionDenied("filesystem: refusing to write a file with several hard links")
        os.set_blocking(fd, True)
        return fd
    except BaseException:
        os.close(fd)
        raise


def _read_capped(fd: int, cap: int, shown: str) -> bytes:
    if os.fstat(fd).st_size > cap:
        raise LimitHit(f"fs: '{shown}' is larger than max_read_bytes ({cap} bytes)")
    chunks, total = [], 0
    while True:
        chunk = os.read(fd, min(CHUNK, cap + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > cap:
            raise LimitHit(f"fs: '{shown}' is larger than max_read_bytes ({cap} bytes)")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


# --- ops ------------------------------------------------------------------------------


def _path(args: dict[str, Any], name: str = "path") -> str:
    return arg(args, name, str)


def _cwd(ctx: HostContext, args: dict[str, Any]) -> str:
    engine = _engine(ctx)
    return engine.guest_path(engine.fs_cwd)


def _stat_allowed(ctx: HostContext, op: str, path: str) -> os.stat_result | None:
    """The stat of what ``path`` points to, once the policy allowed reading it; None if absent.

    Through the fd the check held when there is one: the very object decided on."""
    real, fd = _engine(ctx).check_read_held(op, path)
    if fd is None:
        with _errors(op, path):
            return _lstat(real)
    try:
        return os.fstat(fd)
    finally:
        os.close(fd)


def _exists(ctx: HostContext, args: dict[str, Any]) -> bool:
    path = _path(args)
    real, fd = _engine(ctx).check_read_held("exists", path)
    if fd is not None:  # the check opened the very object: it exists, no stat needed
        os.close(fd)
        return True
    with _errors("exists", path):
        return _lstat(real) is not None


def _is_kind(test: Any, op: str) -> Any:
    def handler(ctx: HostContext, args: dict[str, Any]) -> bool:
        st = _stat_allowed(ctx, op, _path(args))
        return st is not None and bool(test(st.st_mode))

    return handler


def _realpath(ctx: HostContext, args: dict[str, Any]) -> str:
    engine = _engine(ctx)
    return engine.guest_path(engine.check_fs("realpath", _path(args), write=False))


def _read(ctx: HostContext, path: str, op: str) -> bytes:
    engine = _engine(ctx)
    real = engine.check_fs(op, path, write=False)
    with _errors(op, path):
        fd = _open_file(real, os.O_RDONLY)
        try:
            return _read_capped(fd, engine.policy.fs.max_read_bytes, path)
        finally:
            os.close(fd)


def _read_text(ctx: HostContext, args: dict[str, Any]) -> str:
    return _read(ctx, _path(args), "read_text").decode("utf-8", errors="replace")


def _read_bytes(ctx: HostContext, args: dict[str, Any]) -> list[int] | str:
    """The file's bytes as a list of 0..255, or as base64 with ``encoding: "base64"``: a
    third more text than the bytes instead of three to four times, and no list to parse."""
    encoding = arg(args, "encoding", str, "list")
    if encoding not in ("list", "base64"):
        raise InvalidArgument(f"argument 'encoding' must be 'list' or 'base64', got {encoding!r}")
    data = _read(ctx, _path(args), "read_bytes")
    return base64.b64encode(data).decode("ascii") if encoding == "base64" else list(data)


def _bytes_arg(args: dict[str, Any]) -> bytes:
    data = args.get("data")
    if data is not None and not isinstance(data, (str, list)):
        raise InvalidArgument(
            f"argument 'data' must be a string or a list of integers 0..255, got {type(data).__name__}"
        )
    if isinstance(data, list):
        if "data_base64" in args:
            raise InvalidArgument("give 'data' or 'data_base64', not both")
        if not all(isinstance(b, int) and not isinstance(b, bool) and 0 <= b <= 255 for b in data):
            raise InvalidArgument("argument 'data' must be a string or a list of integers 0..255")
        return bytes(data)
    found = bytes_arg(args, "data", "data_base64")
    if found is None:
        raise InvalidArgument("missing argument 'data'")
    return found


def _write(ctx: HostContext, path: str, data: bytes, op: str, *, append: bool = False) -> None:
    engine = _engine(ctx)
    real = engine.check_fs(op, path, write=True)
    cap = engine.policy.fs.max_write_bytes
    if len(data) > cap:
        raise LimitHit(f"fs: {len(data)} bytes for '{path}' exceed max_write_bytes ({cap} bytes)")
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else 0)
    with _errors(op, path):
        fd = _open_file(real, flags)
        try:
            if append and os.fstat(fd).st_size + len(data) > cap:
                raise LimitHit(f"fs: appending to '{path}' would exceed max_write_bytes ({cap} bytes)")
            if not append:
                os.ftruncate(fd, 0)
            _write_all(fd, data)
        finally:
            os.close(fd)


def _write_text(ctx: HostContext, args: dict[str, Any]) -> None:
    _write(ctx, _path(args), arg(args, "data", str).encode("utf-8"), "write_text")


def _write_bytes(ctx: HostContext, args: dict[str, Any]) -> None:
    _write(ctx, _path(args), _bytes_arg(args), "write_bytes")


def _append_text(ctx: HostContext, args: dict[str, Any]) -> None:
    _write(ctx, _path(args), arg(args, "data", str).encode("utf-8"), "append_text", append=True)


def _list_dir(ctx: HostContext, args: dict[str, Any]) -> list[str]:
    path = _path(args)
    real = _engine(ctx).check_fs("list_dir", path, write=False)
    with _errors("list_dir", path):
        fd = _walk(real, last_readable=True)
        try:
            names = os.listdir(fd)
        finally:
            os.close(fd)
    if len(names) > MAX_LIST_ENTRIES:
        raise LimitHit(f"fs: '{path}' has more than {MAX_LIST_ENTRIES} entries")
    return sorted(names)


def _mkdir(ctx: HostContext, args: dict[str, Any]) -> None:
    path = _path(args)
    recursive = arg(args, "recursive", bool, False)
    engine = _engine(ctx)
    real = engine.check_fs("mkdir", path, write=True)
    with _errors("mkdir", path):
        if not recursive:
            with _parent(real) as (dfd, name):
                os.mkdir(name, 0o777, dir_fd=dfd)
            return
        fd = os.open("/", _WALK)
        try:
            here = Path("/")
            for part in real.parts[1:]:
                here = here / part
                try:
                    nxt = os.open(part, _WALK, dir_fd=fd)
                except FileNotFoundError:
                    if not engine.may_write(here):
                        raise PermissionDenied(
                            f"filesystem: mkdir '{path}' would create directories outside the writable roots"
                        ) from None
                    os.mkdir(part, 0o777, dir_fd=fd)
                    nxt = os.open(part, _WALK, dir_fd=fd)
                os.close(fd)
                fd = nxt
        finally:
            os.close(fd)


def _remove(ctx: HostContext, args: dict[str, Any]) -> None:
    path = _path(args)
    recursive = arg(args, "recursive", bool, False)
    real = _engine(ctx).check_fs("remove", path, write=True)
    with _errors("remove", path), _parent(real) as (dfd, name):
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(name, dir_fd=dfd)
        elif recursive:
            import shutil  # only here: a cold run does not pay for it (see design.md)

            shutil.rmtree(name, dir_fd=dfd)
        else:
            os.rmdir(name, dir_fd=dfd)


def _rename(ctx: HostContext, args: dict[str, Any]) -> None:
    src, dst = _path(args, "src"), _path(args, "dst")
    engine = _engine(ctx)
    src_real = engine.check_fs("rename", src, write=True)
    dst_real = engine.check_fs("rename", dst, write=True)
    with _errors("rename", src), _parent(src_real) as (sfd, sname), _parent(dst_real) as (dfd, dname):
        os.rename(sname, dname, src_dir_fd=sfd, dst_dir_fd=dfd)


def _tree_size(fd: int, shown: str, budget: list[int]) -> None:
    """Walk a source tree: regular files and directories only, within the caps."""
    for entry in os.scandir(fd):
        budget[0] -= 1
        if budget[0] < 0:
            raise LimitHit(f"fs: '{shown}' has more than {MAX_COPY_ENTRIES} entries")
        if entry.is_symlink():
            raise PermissionDenied(f"filesystem: copy refuses symlinks ('{shown}/{entry.name}')")
        if entry.is_dir(follow_symlinks=False):
            sub = os.open(entry.name, _OPEN_DIR, dir_fd=fd)
            try:
                _tree_size(sub, f"{shown}/{entry.name}", budget)
            finally:
                os.close(sub)
        elif entry.is_file(follow_symlinks=False):
            budget[1] -= entry.stat(follow_symlinks=False).st_size
            if budget[1] < 0:
                raise LimitHit(f"fs: copying '{shown}' would exceed max_write_bytes")
        else:
            raise PermissionDenied(f"filesystem: copy refuses special files ('{shown}/{entry.name}')")


def _copy_file_fds(src_fd: int, dst_dir: int, name: str) -> None:
    with _create_in(dst_dir, name) as out:
        while chunk := os.read(src_fd, CHUNK):
            _write_all(out, chunk)


@contextmanager
def _create_in(dir_fd: int, name: str) -> Iterator[int]:
    # No O_TRUNC: a hard link to a file outside the writable roots must be
    # refused before a single byte of it is lost, so truncate only after the check.
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | _FILE, 0o666, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
            raise PermissionDenied("filesystem: copy destination is not a plain file")
        os.ftruncate(fd, 0)
        os.set_blocking(fd, True)
        yield fd
    finally:
        os.close(fd)


def _copy_tree(src_fd: int, dst_dir: int, name: str) -> None:
    os.mkdir(name, 0o777, dir_fd=dst_dir)
    out = os.open(name, _WALK, dir_fd=dst_dir)
    try:
        for entry in os.scandir(src_fd):
            if entry.is_dir(follow_symlinks=False):
                sub = os.open(entry.name, _OPEN_DIR, dir_fd=src_fd)
                try:
                    _copy_tree(sub, out, entry.name)
                finally:
                    os.close(sub)
            else:
                f = os.open(entry.name, os.O_RDONLY | _FILE, dir_fd=src_fd)
                try:
                    _copy_file_fds(f, out, entry.name)
                finally:
                    os.close(f)
    finally:
        os.close(out)


def _copy(ctx: HostContext, args: dict[str, Any]) -> None:
    src, dst = _path(args, "src"), _path(args, "dst")
    engine = _engine(ctx)
    src_real = engine.check_fs("copy", src, write=False)
    dst_real = engine.check_fs("copy", dst, write=True)
    with _errors("copy", src):
        st = _lstat(dst_real)
        if st is not None and stat.S_ISDIR(st.st_mode):
            dst = posixpath.join(dst, src_real.name)
            dst_real = engine.check_fs("copy", dst, write=True)
        if dst_real == src_real or dst_real.is_relative_to(src_real):
            raise InvalidArgument(f"fs.copy: cannot copy '{src}' into itself")
        cap = engine.policy.fs.max_write_bytes
        src_st = _lstat(src_real)
        if src_st is None:
            raise NotFound(f"fs.copy: '{src}' does not exist")
        if stat.S_ISDIR(src_st.st_mode):
            sfd = _walk(src_real, last_readable=True)
            try:
                _tree_size(sfd, src, [MAX_COPY_ENTRIES, cap])
                with _parent(dst_real) as (dfd, name):
                    _copy_tree(sfd, dfd, name)
            finally:
                os.close(sfd)
            return
        sfd = _open_file(src_real, os.O_RDONLY)
        try:
            if os.fstat(sfd).st_size > cap:
                raise LimitHit(f"fs: '{src}' is larger than max_write_bytes ({cap} bytes)")
            with _parent(dst_real) as (dfd, name):
                _copy_file_fds(sfd, dfd, name)
        finally:
            os.close(sfd)


def _stat(ctx: HostContext, args: dict[str, Any]) -> dict[str, Any]:
    path = _path(args)
    engine = _engine(ctx)
    entry = engine.check_fs("lstat", path, write=False)
    with _errors("stat", path):
        lst = _lstat(entry)
        if lst is None:
            raise NotFound(f"fs.stat: '{path}' does not exist")
        st = lst
        if stat.S_ISLNK(lst.st_mode):
            real = engine.check_fs("stat", path, write=False)
            st = _lstat(real)
            if st is None:
                raise NotFound(f"fs.stat: '{path}' is a dangling symlink")
    return {
        "size": st.st_size,
        "is_file": stat.S_ISREG(st.st_mode),
        "is_dir": stat.S_ISDIR(st.st_mode),
        "is_symlink": stat.S_ISLNK(lst.st_mode),
        "mtime": st.st_mtime,
        "mode": stat.S_IMODE(st.st_mode),
    }


OPS: tuple[Op, ...] = (
    Op("fs.cwd", _cwd),
    Op("fs.exists", _exists),
    Op("fs.is_file", _is_kind(stat.S_ISREG, "is_file")),
    Op("fs.is_dir", _is_kind(stat.S_ISDIR, "is_dir")),
    Op("fs.realpath", _realpath),
    Op("fs.read_text", _read_text),
    Op("fs.read_bytes", _read_bytes),
    Op("fs.write_text", _write_text),
    Op("fs.write_bytes", _write_bytes),
    Op("fs.append_text", _append_text),
    Op("fs.list_dir", _list_dir),
    Op("fs.mkdir", _mkdir),
    Op("fs.remove", _remove),
    Op("fs.rename", _rename),
    Op("fs.copy", _copy),
    Op("fs.stat", _stat),
)
