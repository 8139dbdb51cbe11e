"""What the hub keeps about a server's process: its stderr tail and its handle."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

TAIL_BYTES = 4096


@dataclass
class StderrTail:
    """The last few KiB a server wrote to stderr (thread-safe, for error messages)."""

    limit: int = TAIL_BYTES
    _data: bytearray = field(default_factory=bytearray)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, chunk: bytes) -> None:
        with self._lock:
            self._data += chunk
            if len(self._data) > self.limit:
                del self._data[: len(self._data) - self.limit]

    def text(self, max_lines: int = 12) -> str:
        with self._lock:
            data = bytes(self._data)
        lines = data.decode("utf-8", errors="replace").strip().splitlines()
        return "\n".join(lines[-max_lines:])


@dataclass
class ProcessInfo:
    """Filled in once the child runs; lets the owner see it (tests, diagnostics)."""

    pid: int | None = None
    process: Any = None  # the anyio Process

    @property
    def returncode(self) -> int | None:
        return self.process.returncode if self.process is not None else None

    @property
    def exited(self) -> bool:
        return self.returncode is not None
