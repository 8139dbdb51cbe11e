"""WASI file writes obey the hard-link rule of ``fs.*``.

A raw ``.wasm`` agent reaches its preopened directories through WASI, which
wasmtime implements natively and confines to the preopens, but which knows
nothing of hugind's rule that **a write never changes an inode reachable
outside the roots** (``hugind/host/fs.py`` never writes a regular file with
several hard links). This module interposes on the few WASI functions that can
open a file for writing or change a file's size or times, checks the inode the
call actually reached, and forwards every other WASI function untouched (only
the interposed ones go through Python).

The real functions are reached through a relay instance (``wasi_relay.py``
says why), made in the guest's store on the first interposed call, not
before: most guests (the JS engine) never make one. The linker holding the
interposed functions is shared by every store of an engine, finding the
store's guard through ``current``. A wrapper copies the guest's path into the
relay's memory, calls the forwarder, checks the result and copies it back. The
guest's memory is only read and, for the returned fd, written at the pointer
the guest gave.

Why the check holds: it is made on the opened fd (``fd_filestat_get``), after
the open, so it is about the inode actually opened, not about a name a child
process could swap. ``O_TRUNC`` is applied only after the check, so a refused
hard link never loses a byte. A regular file with one link at that moment is
reachable only through its name inside the root: it is the root's own file,
whatever happens to it later.
"""

from __future__ import annotations

import posixpath
import struct
from collections.abc import Callable
from typing import Any

import wasmtime

from hugind.errors import EngineError
from hugind.sandbox.wasi_relay import (
    EACCES,
    EFAULT,
    EISDIR,
    ENAMETOOLONG,
    ENOTSUP,
    EPERM,
    ESUCCESS,
    PAGE,
    WASI,
    RelaySpec,
    guest_memory,
)
from hugind.sandbox.wasi_relay import instantiate as instantiate_relay

# Rights, open flags and fd flags that can make an opened file writable (or
# that wasmtime may one day honour as such): any of them is a write intent.
WRITE_RIGHTS = (1 << 0) | (1 << 6) | (1 << 8) | (1 << 22)  # FD_DATASYNC, FD_WRITE, FD_ALLOCATE, FD_FILESTAT_SET_SIZE
RIGHT_FD_WRITE = 1 << 6
OFLAG_DIRECTORY = 1 << 1
OFLAG_TRUNC = 1 << 3
WRITE_FDFLAGS = (1 << 0) | (1 << 1) | (1 << 3) | (1 << 4)  # APPEND, DSYNC, RSYNC, SYNC

FILETYPE_DIRECTORY = 3
FILETYPE_REGULAR_FILE = 4

# filestat: dev, ino, filetype (u8 + padding), nlink, size, atim, mtim, ctim
_FILESTAT = struct.Struct("<QQB7xQQQQQ")
# prestat: tag (u8 + padding), name length
_PRESTAT = struct.Struct("<B3xI")

# The relay's memory: fixed slots for results, then the path being checked.
_STAT_AT = 0
_FD_AT = 64
_PRESTAT_AT = 72
_PATH_AT = 128
_RELAY_BYTES = 65536
MAX_PATH_BYTES = _RELAY_BYTES - _PATH_AT

_MASK32 = 0xFFFFFFFF

# What the relay forwards to the real WASI (every one returns an errno).
_RELAYED: dict[str, tuple[str, ...]] = {
    "path_open": ("i32", "i32", "i32", "i32", "i32", "i64", "i64", "i32", "i32"),
    "path_filestat_get": ("i32", "i32", "i32", "i32", "i32"),
    "fd_filestat_get": ("i32", "i32"),
    "fd_filestat_set_size": ("i32", "i64"),
    "fd_filestat_set_times": ("i32", "i64", "i64", "i32"),
    "fd_allocate": ("i32", "i64", "i64"),
    "fd_close": ("i32",),
    "fd_prestat_get": ("i32", "i32"),
    "fd_prestat_dir_name": ("i32", "i32", "i32"),
}
# What the guest gets from us instead of from wasmtime.
_INTERPOSED: dict[str, tuple[str, ...]] = {
    "path_open": _RELAYED["path_open"],
    "path_filestat_set_times": ("i32", "i32", "i32", "i32", "i64", "i64", "i32"),
    "path_link": ("i32", "i32", "i32", "i32", "i32", "i32", "i32"),
    "fd_filestat_set_size": _RELAYED["fd_filestat_set_size"],
    "fd_filestat_set_times": _RELAYED["fd_filestat_set_times"],
    "fd_allocate": _RELAYED["fd_allocate"],
}


_RELAY = RelaySpec(tuple(_RELAYED.items()), _RELAY_BYTES // PAGE, _RELAY_BYTES // PAGE)


def _functype(params: tuple[str, ...]) -> wasmtime.FuncType:
    types = {"i32": wasmtime.ValType.i32(), "i64": wasmtime.ValType.i64()}
    return wasmtime.FuncType([types[p] for p in params], [types["i32"]])


def _is_write_intent(oflags: int, rights: int, fdflags: int) -> bool:
    return bool(rights & WRITE_RIGHTS or oflags & OFLAG_TRUNC or fdflags & WRITE_FDFLAGS)


class WasiGuard:
    """The interposed WASI functions of one store.

    ``policy`` (a ``PolicyEngine``, or None outside a run) gets every refusal
    as a ``filesystem.host-refusal`` denial, like the refusals of ``fs.*``.
    """

    def __init__(self, engine: wasmtime.Engine, policy: Any | None) -> None:
        self._engine = engine
        self._policy = policy
        self._mem: wasmtime.Memory | None = None
        self._real: dict[str, wasmtime.Func] = {}

    def _relay_ready(self, caller: wasmtime.Caller) -> wasmtime.Memory:
        """The relay's memory, instantiating the relay in the caller's store on first use."""
        if self._mem is None:
            relay = instantiate_relay(self._engine, caller, _RELAY)
            self._real = relay.functions
            self._mem = relay.memory
        return self._mem

    @property
    def _memory(self) -> wasmtime.Memory:
        if self._mem is None:
            raise EngineError("the WASI relay is used before it was instantiated")
        return self._mem

    def handler(self, name: str) -> Callable[..., int]:
        """The guard's implementation of interposed function ``name``."""
        if name == "path_open":
            return self._path_open
        if name == "path_filestat_set_times":
            return self._path_filestat_set_times
        if name == "path_link":
            return self._path_link
        return self._fd_guarded(name)

    # ---- the interposed functions ----------------------------------------------------

    def _path_open(
        self,
        caller: wasmtime.Caller,
        dirfd: int,
        dirflags: int,
        path_ptr: int,
        path_len: int,
        oflags: int,
        rights: int,
        inheriting: int,
        fdflags: int,
        fd_out: int,
    ) -> int:
        guest = guest_memory(caller)
        path = _read(caller, guest, path_ptr, path_len)
        if isinstance(path, int):
            return path
        fd_out &= _MASK32
        if fd_out + 4 > guest.data_len(caller):
            return EFAULT  # checked before opening: an fd the guest never learns is still usable by number
        write = _is_write_intent(oflags, rights, fdflags)
        truncate = bool(oflags & OFLAG_TRUNC)
        if truncate:
            # Open without truncating (wasmtime opens O_TRUNC files writable anyway):
            # a refused hard link must not lose a byte before the check.
            oflags &= ~OFLAG_TRUNC
            rights |= RIGHT_FD_WRITE
        self._memory.write(caller, path, _PATH_AT)
        err = self._real["path_open"](
            caller, dirfd, dirflags, _PATH_AT, len(path), oflags, rights, inheriting, fdflags, _FD_AT
        )
        if err:
            return err
        fd = int.from_bytes(self._memory.read(caller, _FD_AT, _FD_AT + 4), "little")
        if write:
            err = self._check_opened(caller, fd, truncate, dirfd, path)
            if err:
                self._real["fd_close"](caller, fd)
                return err
        guest.write(caller, fd.to_bytes(4, "little"), fd_out)
        return ESUCCESS

    def _check_opened(self, caller: wasmtime.Caller, fd: int, truncate: bool, dirfd: int, path: bytes) -> int:
        """The errno for a file just opened for writing, after truncating it if asked."""
        err, filetype, nlink = self._stat_fd(caller, fd)
        if err:
            return err
        if filetype == FILETYPE_REGULAR_FILE and nlink > 1:
            self._refused(caller, "path_open", path=self._shown(caller, dirfd, path))
            return EACCES
        if not truncate:
            return ESUCCESS
        if filetype == FILETYPE_DIRECTORY:
            return EISDIR
        if filetype == FILETYPE_REGULAR_FILE:
            return self._real["fd_filestat_set_size"](caller, fd, 0)
        return ESUCCESS  # O_TRUNC means nothing for a FIFO or a device

    def _path_filestat_set_times(
        self,
        caller: wasmtime.Caller,
        dirfd: int,
        lookupflags: int,
        path_ptr: int,
        path_len: int,
        atim: int,
        mtim: int,
        fst_flags: int,
    ) -> int:
        # Done as open + check + futimens on that fd, so the times set are those
        # of the inode checked, never of a name swapped in between.
        path = _read(caller, guest_memory(caller), path_ptr, path_len)
        if isinstance(path, int):
            return path
        self._memory.write(caller, path, _PATH_AT)
        err = self._real["path_filestat_get"](caller, dirfd, lookupflags, _PATH_AT, len(path), _STAT_AT)
        if err:
            return err
        filetype = self._filestat(caller)[2]
        if filetype not in (FILETYPE_REGULAR_FILE, FILETYPE_DIRECTORY):
            # Symlinks (not followed), FIFOs, devices: cannot be opened to be
            # checked race-free (a FIFO would block), and agents need not touch them.
            return ENOTSUP
        oflags = OFLAG_DIRECTORY if filetype == FILETYPE_DIRECTORY else 0
        err = self._real["path_open"](caller, dirfd, lookupflags, _PATH_AT, len(path), oflags, 0, 0, 0, _FD_AT)
        if err:
            return err
        fd = int.from_bytes(self._memory.read(caller, _FD_AT, _FD_AT + 4), "little")
        try:
            err, filetype, nlink = self._stat_fd(caller, fd)
            if err:
                return err
            if filetype == FILETYPE_REGULAR_FILE and nlink > 1:
                self._refused(caller, "path_filestat_set_times", path=self._shown(caller, dirfd, path))
                return EPERM
            return self._real["fd_filestat_set_times"](caller, fd, atim, mtim, fst_flags)
        finally:
            self._real["fd_close"](caller, fd)

    def _path_link(
        self,
        caller: wasmtime.Caller,
        old_fd: int,
        old_flags: int,
        old_ptr: int,
        old_len: int,
        new_fd: int,
        new_ptr: int,
        new_len: int,
    ) -> int:
        # Refused outright: fs.* has no way to make a hard link either, and a
        # link made by the guest could only yield files the rule then refuses to write.
        guest = guest_memory(caller)
        src = _read(caller, guest, old_ptr, old_len)
        if isinstance(src, int):
            return src
        dst = _read(caller, guest, new_ptr, new_len)
        if isinstance(dst, int):
            return dst
        self._refused(caller, "path_link", src=self._shown(caller, old_fd, src), dst=self._shown(caller, new_fd, dst))
        return EPERM

    def _fd_guarded(self, name: str) -> Callable[..., int]:
        """``name(fd, ...)``, refused on a regular file with several links.

        A writable fd only exists for a file that passed the open check, and the
        OS refuses to resize a read-only one; this is the second line. Times,
        though, can be set through any fd, read-only ones included."""
        real = self._real[name]

        def guarded(caller: wasmtime.Caller, fd: int, *args: int) -> int:
            err, filetype, nlink = self._stat_fd(caller, fd)
            if not err and filetype == FILETYPE_REGULAR_FILE and nlink > 1:
                self._refused(caller, name, fd=fd)
                return EPERM
            return real(caller, fd, *args)

        return guarded

    # ---- helpers -------------------------------------------------------------------

    def _stat_fd(self, caller: wasmtime.Caller, fd: int) -> tuple[int, int, int]:
        """(errno, filetype, nlink) of an fd of the guest's table."""
        err = self._real["fd_filestat_get"](caller, fd, _STAT_AT)
        if err:
            return err, 0, 0
        stat = self._filestat(caller)
        return ESUCCESS, stat[2], stat[3]

    def _filestat(self, caller: wasmtime.Caller) -> tuple[int, ...]:
        return _FILESTAT.unpack(bytes(self._memory.read(caller, _STAT_AT, _STAT_AT + _FILESTAT.size)))

    def _shown(self, caller: wasmtime.Caller, dirfd: int, path: bytes) -> str:
        """The guest's path joined to its preopen's name when the dir fd is a preopen."""
        text = path.decode("utf-8", errors="replace")
        if self._real["fd_prestat_get"](caller, dirfd, _PRESTAT_AT):
            return text
        tag, name_len = _PRESTAT.unpack(bytes(self._memory.read(caller, _PRESTAT_AT, _PRESTAT_AT + _PRESTAT.size)))
        if tag != 0 or name_len > MAX_PATH_BYTES:
            return text
        if self._real["fd_prestat_dir_name"](caller, dirfd, _PATH_AT, name_len):
            return text
        prefix = bytes(self._memory.read(caller, _PATH_AT, _PATH_AT + name_len)).decode("utf-8", errors="replace")
        return posixpath.join(prefix, text)

    def _refused(self, caller: wasmtime.Caller, func: str, **detail: Any) -> None:
        if self._policy is not None:
            request = {"op": f"wasi.{func}", **detail}
            self._policy.record("filesystem", request, False, "filesystem.host-refusal")


def _read(caller: wasmtime.Caller, memory: wasmtime.Memory, ptr: int, length: int) -> bytes | int:
    """Guest bytes for a path argument, or the errno to return."""
    ptr &= _MASK32
    length &= _MASK32
    if ptr + length > memory.data_len(caller):
        return EFAULT
    if length > MAX_PATH_BYTES:
        return ENAMETOOLONG
    return bytes(memory.read(caller, ptr, ptr + length))


def install(linker: wasmtime.Linker, current: Callable[[], WasiGuard]) -> None:
    """Shadow the interposed functions in a linker that already has ``define_wasi()``.

    The linker may serve many stores: each call asks ``current()`` for the guard
    of the store whose guest is running (it must fail rather than guess)."""

    def route(name: str) -> Callable[..., int]:
        def interposed(caller: wasmtime.Caller, *args: int) -> int:
            guard = current()
            guard._relay_ready(caller)
            return guard.handler(name)(caller, *args)

        return interposed

    linker.allow_shadowing = True
    try:
        for name, params in _INTERPOSED.items():
            linker.define_func(WASI, name, _functype(params), route(name), access_caller=True)
    finally:
        linker.allow_shadowing = False
