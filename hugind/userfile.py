"""Reading a file the user named on the command line: a preset, a workflow, a
record, a batch's inputs or results, a diff operand.

Only a regular file is read, opened non-blocking so that a FIFO or a device
(``/dev/zero``, a terminal) is refused at once instead of hanging the command
or filling memory, and at most ``limit`` bytes of it. Each failure is one
line naming the file and the cause, raised as the caller's error class (a
record is ``RecordInvalid``, a preset ``ManifestError`` ...).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from hugind.errors import HugindError, UsageError

MiB = 1 << 20
TEXT_LIMIT = 64 * MiB  # YAML and policy files: far above any real one
DATA_LIMIT = 4096 * MiB  # records, batch inputs and results


def read_user_file(
    path: Path | str, what: str, *, limit: int = TEXT_LIMIT, error: type[HugindError] = UsageError
) -> bytes:
    """The bytes of ``path`` (``what`` names it in messages: "the preset", "record")."""
    shown = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise error(f"cannot read {what} {shown}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise error(f"{what} {shown} is a directory, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{what} {shown} is not a regular file (a device, FIFO or socket is never read)")
        if info.st_size > limit:
            raise error(f"{what} {shown} is larger than {_size(limit)}")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 * MiB, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:  # it grew while being read
            raise error(f"{what} {shown} is larger than {_size(limit)}")
        return b"".join(chunks)
    except OSError as exc:
        raise error(f"cannot read {what} {shown}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _size(limit: int) -> str:
    return f"{limit // MiB} MiB" if limit % MiB == 0 else f"{limit} bytes"


def read_state_file(path: Path, fmt: str, what: str, missing: str) -> dict[str, Any]:
    """A JSON state file hugind saved (a session, a team run): ``missing`` if there is
    none, a UsageError naming the file if it is unreadable or of another ``format``."""
    if not os.path.lexists(path):
        raise UsageError(missing)
    try:
        doc = json.loads(read_user_file(path, "the saved state", limit=DATA_LIMIT).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != fmt:
        raise UsageError(f"{path} is not a hugind {what} file ({fmt})")
    return doc
