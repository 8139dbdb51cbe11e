"""Appending a record: one line per event, flushed at once, fsync'd at op boundaries.

Each line is written whole with one ``write`` on an unbuffered file, so a
crash leaves whole lines; ``sync=True`` (host ops, the closing line) also
asks the kernel to put it on disk. Clock and random reads only flush: they
come at the rate of ``Date.now()`` and are worth little without the op that
follows them. Thread-safe: async ops finish on worker threads.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any

from hugind.errors import UsageError
from hugind.replay.format import GENESIS, canonical, line_hash
from hugind.replay.scrub import Scrubber


class RecordWriter:
    def __init__(self, path: Path, scrubber: Scrubber) -> None:
        self.path = path
        self.scrubber = scrubber
        self._lock = threading.Lock()
        self._prev = GENESIS
        self._seq = 0
        self._file_hash = hashlib.sha256()
        try:
            # O_EXCL: a record is never appended to another run's, nor written over one.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise UsageError(f"--record: {path} already exists (a record is never overwritten)") from None
        except OSError as exc:
            raise UsageError(f"--record: cannot create {path}: {exc.strerror}") from None
        self._fd: int | None = fd

    def append(self, body: dict[str, Any], *, sync: bool = False) -> int:
        """Write one line; returns its sequence number (-1 once closed)."""
        with self._lock:
            if self._fd is None:
                return -1
            seq = self._seq
            text = self.scrubber.text(canonical({"seq": seq, "prev": self._prev, **body}))
            line = text.encode("utf-8", "surrogatepass")
            os.write(self._fd, line + b"\n")
            if sync:
                os.fsync(self._fd)
            self._file_hash.update(line + b"\n")
            self._prev = line_hash(line)
            self._seq += 1
            return seq

    @property
    def count(self) -> int:
        return self._seq

    def close(self) -> str:
        """Close the file; the digest of its bytes (``sha256:<hex>``) for the user to pin."""
        with self._lock:
            if self._fd is not None:
                os.fsync(self._fd)
                os.close(self._fd)
                self._fd = None
            return "sha256:" + self._file_hash.hexdigest()
