"""Atomic file replacement: a reader or a crash sees the old file or the new one, never a torn one.

The data goes to a temp file in the target's directory (same filesystem, so the
rename is atomic), is fsynced, renamed over the target, and the directory is
fsynced so the rename itself survives a power loss. The temp file is created
0600 and keeps that mode: state files hold conversations and results.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def replace_atomically(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
