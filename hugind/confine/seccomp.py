"""The children's seccomp filter: compiled by libseccomp in hugind, loaded in the sandbox.

Builds and exports only. :data:`hugind.confine.seccomp_rules.RULES` becomes
one BPF program through libseccomp (``pyseccomp``, ctypes over the system's
``libseccomp.so.2``); the bytes are kept in a sealed memfd for the whole
process. Whoever installs it reads them from there, by descriptor: bubblewrap
(``--seccomp FD``, last step before it executes the program) and the
stdlib-only launcher (one ``prctl(PR_SET_SECCOMP)`` before ``execve``). The
filter cannot be written afterwards (the memfd is sealed) and a child cannot
reach it (hugind's descriptors are not in any sandbox).

Syscalls of other architectures (the 32-bit entry points) kill the caller:
libseccomp's default for a foreign architecture.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import os
import threading
from typing import Any

from hugind.confine.seccomp_rules import RULES, Row

_lock = threading.Lock()
_memfd: tuple[int, int] | None = None  # (pid, fd): a forked copy of hugind makes its own


class SeccompUnavailable(Exception):
    """libseccomp or its Python binding is missing: the syscall filter layer is absent."""


def _binding():
    try:
        import pyseccomp
    except (ImportError, OSError, RuntimeError) as exc:  # no libseccomp.so.2 for the binding
        raise SeccompUnavailable(f"libseccomp binding unavailable: {exc}") from None
    return pyseccomp


def _arg(lib, condition: tuple):
    index, op, value, *mask = condition
    if op == "masked_eq":
        return lib.Arg(index, lib.MASKED_EQ, mask[0], value)
    return lib.Arg(index, {"eq": lib.EQ, "ne": lib.NE, "gt": lib.GT}[op], value)


# Syscalls added after libseccomp releases still in use, with the one number the
# kernel gives them on x86_64 and on the asm-generic table (aarch64).
LATE_SYSCALLS = {"fchmodat2": 452}
_LATE_ARCHES = ("x86_64", "aarch64")


def syscall_number(lib: Any, name: str) -> int | None:
    """``name``'s number on this architecture, or None where it has none.

    pyseccomp answers an unknown name with a negative number (libseccomp's
    ``__NR_SCMP_ERROR``) rather than an exception; either means the library
    does not know it."""
    try:
        number = lib.resolve_syscall(lib.Arch.NATIVE, name)
    except ValueError:
        number = -1
    if number >= 0:
        return number
    if name in LATE_SYSCALLS and os.uname().machine in _LATE_ARCHES:
        return LATE_SYSCALLS[name]
    return None


def compile_rules(rules: tuple[Row, ...] = RULES) -> bytes:
    """The BPF program (native architecture) for ``rules``; everything else allowed.

    A syscall newer than the installed libseccomp (``fchmodat2`` before 2.5.5) is
    filtered by the number the kernel gives it (``LATE_SYSCALLS``): left out, it
    would be a way around its older twin's row. A name neither knows (``open`` on
    arm64) has no number on this architecture and is left out."""
    lib = _binding()
    filt = lib.SyscallFilter(lib.ALLOW)
    for name, err, conditions, _reason in rules:
        number = syscall_number(lib, name)
        if number is None:
            continue
        filt.add_rule(lib.ERRNO(getattr(errno, err)), number, *(_arg(lib, c) for c in conditions))
    read, write = os.pipe()
    try:
        with os.fdopen(write, "wb", closefd=False) as sink:
            filt.export_bpf(sink)
        os.close(write)
        write = -1
        chunks = []
        while chunk := os.read(read, 65536):
            chunks.append(chunk)
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)
    return b"".join(chunks)


@functools.lru_cache(maxsize=1)
def program() -> bytes:
    """The children's filter, compiled once per process."""
    return compile_rules()


def available() -> str:
    """'' when the filter can be built here, else why not."""
    try:
        program()
    except SeccompUnavailable as exc:
        return str(exc)
    except Exception as exc:  # libseccomp refused a rule: the layer is absent
        return f"libseccomp could not build the filter: {exc}"
    return ""


def filter_fd() -> int:
    """A sealed memfd holding :func:`program`, kept open for this process's life."""
    global _memfd
    with _lock:
        if _memfd is not None and _memfd[0] == os.getpid():
            return _memfd[1]
        data = program()
        fd = os.memfd_create("hugind-seccomp", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        seals = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
        _memfd = (os.getpid(), fd)
        return fd


def filter_path() -> str:
    """Where a child of this process opens the filter (before it enters any namespace):
    this process's own descriptor, read-only, through /proc."""
    return f"/proc/{os.getpid()}/fd/{filter_fd()}"
