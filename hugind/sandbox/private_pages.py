"""Which pages of a privately mapped file are no longer the file's own.

In a private mapping a page the process never wrote is the file's page (or
not mapped at all, and the file's on first access); the first write makes it
a private copy. So a page "present or swapped out, and not a file page" is
exactly a page that may differ from the file. recycle.py copies those back.

The kernel answers in one of two ways, both from ``/proc/self/pagemap``:

* the ``PAGEMAP_SCAN`` ioctl (Linux 6.7+) walks the range and returns only
  the matching runs, already joined;
* else one 64-bit entry per page is read (bit 63 present, 62 swapped, 61
  file page or shared memory) and the matching runs are found here.

Both apply the same rule; a test checks that they agree. The file is opened
once per process (a child of ``fork`` must read its own, so the pid is checked).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import mmap
import os
import re
import sys
import threading

PAGE = mmap.PAGESIZE

# Pagemap entries: the byte holding bits 56-63, by the machine's byte order.
_TOP = 7 if sys.byteorder == "little" else 0
_PRESENT, _SWAPPED, _FILE = 0x80, 0x40, 0x20  # bits 63, 62, 61
# 1 for a page to report: present or swapped, and not a file page.
_PRIVATE = bytes(1 if b & (_PRESENT | _SWAPPED) and not b & _FILE else 0 for b in range(256))
_RUNS = re.compile(rb"\x01+")

# PAGEMAP_SCAN categories (linux/fs.h).
_IS_FILE, _IS_PRESENT, _IS_SWAPPED = 1 << 2, 1 << 3, 1 << 4


class _ScanArg(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_uint64)
        for name in (
            "size",
            "flags",
            "start",
            "end",
            "walk_end",
            "vec",
            "vec_len",
            "max_pages",
            "category_inverted",
            "category_mask",
            "category_anyof_mask",
            "return_mask",
        )
    ]


class _Region(ctypes.Structure):
    _fields_ = [("start", ctypes.c_uint64), ("end", ctypes.c_uint64), ("categories", ctypes.c_uint64)]


# _IOWR('f', 16, struct pm_scan_arg)
_PAGEMAP_SCAN = (3 << 30) | (ctypes.sizeof(_ScanArg) << 16) | (ord("f") << 8) | 16
_VEC_LEN = 128

_lock = threading.Lock()
_pid = -1
_fd = -1
_scan_works = True
_regions = (_Region * _VEC_LEN)()
_words = memoryview(_regions).cast("B").cast("Q")


def private_runs(base: int, length: int) -> list[tuple[int, int]] | None:
    """The runs of pages in [base, base + length) that may differ from the file
    mapped there, as (start, end) offsets from ``base``; None if the kernel
    cannot say (then nothing may be assumed of any page)."""
    if base % PAGE or length % PAGE:
        return None
    with _lock:
        fd = _pagemap_fd()
        if fd < 0:
            return None
        if _scan_works:
            runs = _scan(fd, base, length)
            if runs is not None:
                return runs
        return _read(fd, base, length)


def _pagemap_fd() -> int:
    global _pid, _fd
    if _pid != os.getpid():
        _pid = os.getpid()
        try:
            _fd = os.open("/proc/self/pagemap", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            _fd = -1
    return _fd


def _scan(fd: int, base: int, length: int) -> list[tuple[int, int]] | None:
    global _scan_works
    end = base + length
    arg = _ScanArg(
        size=ctypes.sizeof(_ScanArg),
        start=base,
        end=end,
        vec=ctypes.addressof(_regions),
        vec_len=_VEC_LEN,
        category_inverted=_IS_FILE,
        category_mask=_IS_FILE,  # after inversion: not a file page
        category_anyof_mask=_IS_PRESENT | _IS_SWAPPED,
        return_mask=_IS_PRESENT | _IS_SWAPPED,
    )
    runs: list[tuple[int, int]] = []
    while True:
        try:
            found = fcntl.ioctl(fd, _PAGEMAP_SCAN, arg)
        except OSError as exc:
            if exc.errno in (errno.ENOTTY, errno.EINVAL, errno.EOPNOTSUPP):
                _scan_works = False  # an older kernel: the entries are read instead
            return None
        # (start, end, categories) triples read as plain integers: ctypes' field
        # access per region costs more than the whole ioctl.
        words = _words[: found * 3]
        for start, stop in zip(words[0::3].tolist(), words[1::3].tolist(), strict=True):
            if runs and runs[-1][1] == start - base:
                runs[-1] = (runs[-1][0], stop - base)
            else:
                runs.append((start - base, stop - base))
        if arg.walk_end >= end:
            return runs
        if arg.walk_end <= arg.start:  # no progress: trust nothing
            return None
        arg.start = arg.walk_end  # the regions were full: go on from where the walk stopped


def _read(fd: int, base: int, length: int) -> list[tuple[int, int]] | None:
    pages = length // PAGE
    try:
        raw = os.pread(fd, pages * 8, base // PAGE * 8)
    except OSError:
        return None
    if len(raw) != pages * 8:
        return None
    marks = raw[_TOP::8].translate(_PRIVATE)
    return [(run.start() * PAGE, run.end() * PAGE) for run in _RUNS.finditer(marks)]
