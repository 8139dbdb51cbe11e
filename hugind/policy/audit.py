"""The audit log: one JSON object per policy decision, appended as a line.

Entry: ``{"ts", "capability", "op", "request", "decision": "allow"|"deny", "rule"}``.
Requests are recorded as the guest made them, minus anything that could
carry a host secret: environment mappings are dropped, credential headers
are masked, long strings are cut.

Decisions come at the rate of host calls, so one kept only in memory (no log
file) is stored as it came and becomes an entry when someone reads it.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO, overload

from hugind.errors import UsageError

SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key"})
MAX_STRING = 1000


def redact(value: Any, key: str = "") -> Any:
    if key.lower() in ("env", "environ", "environment"):
        return "<redacted>"
    if isinstance(value, dict):
        secret = key.lower() == "headers"
        return {
            str(k): "<redacted>" if secret and str(k).lower() in SECRET_HEADERS else redact(v, str(k))
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v) for v in value[:100]]
    if isinstance(value, str) and len(value) > MAX_STRING:
        return value[:MAX_STRING] + f"...(+{len(value) - MAX_STRING} chars)"
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


# A decision as recorded: (time.time(), capability, request, allowed, rule).
_Raw = tuple[float, str, dict[str, Any], bool, str]


def _entry(raw: _Raw) -> dict[str, Any]:
    ts, capability, request, allowed, rule = raw
    return {
        "ts": datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds"),
        "capability": capability,
        "op": request.get("op", ""),
        "request": redact(request),
        "decision": "allow" if allowed else "deny",
        "rule": rule,
    }


class _Entries(Sequence[dict[str, Any]]):
    """The kept entries, each built when read."""

    def __init__(self, kept: deque[_Raw | dict[str, Any]], lock: threading.Lock) -> None:
        self._kept = kept
        self._lock = lock

    def _snapshot(self) -> list[_Raw | dict[str, Any]]:
        with self._lock:
            return list(self._kept)

    def __len__(self) -> int:
        return len(self._kept)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        items = self._snapshot()
        if isinstance(index, slice):
            return [_built(item) for item in items[index]]
        return _built(items[index])

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (_built(item) for item in self._snapshot())


def _built(item: _Raw | dict[str, Any]) -> dict[str, Any]:
    return item if isinstance(item, dict) else _entry(item)


class AuditLog:
    """Thread-safe JSON-lines sink; also keeps the last ``keep`` entries in memory."""

    def __init__(self, path: str | Path | None = None, *, keep: int = 10_000) -> None:
        self.path = Path(path) if path is not None else None
        self._kept: deque[_Raw | dict[str, Any]] = deque(maxlen=keep)
        self.write_errors = 0
        self._lock = threading.Lock()
        self._file: TextIO | None = None
        if self.path is not None:
            try:
                self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
            except OSError as exc:
                raise UsageError(f"cannot open audit log {self.path}: {exc.strerror}") from None

    @property
    def entries(self) -> _Entries:
        """The last ``keep`` entries, oldest first."""
        return _Entries(self._kept, self._lock)

    def write(self, capability: str, request: dict[str, Any], allowed: bool, rule: str) -> dict[str, Any]:
        entry = _entry((time.time(), capability, request, allowed, rule))
        self.keep(entry, json.dumps(entry, ensure_ascii=False, sort_keys=False))
        return entry

    def keep(self, entry: dict[str, Any], line: str) -> None:
        """Keep ``entry`` and append its ``line`` to the file, if there is one."""
        with self._lock:
            self._kept.append(entry)
            if self._file is not None:
                try:
                    self._file.write(line + "\n")
                    self._file.flush()
                except OSError:
                    self.write_errors += 1

    def note(self, capability: str, request: dict[str, Any], allowed: bool, rule: str) -> None:
        """``write`` for callers that need no entry back: without a log file, nothing is formatted now."""
        if self._file is not None:
            self.write(capability, request, allowed, rule)
            return
        raw = (time.time(), capability, dict(request), allowed, rule)
        with self._lock:
            self._kept.append(raw)

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                file, self._file = self._file, None
                # Closing flushes the lines a failed write left buffered: counted like that
                # write (the run's own end must not turn into an OSError from its log).
                try:
                    file.close()
                except OSError:
                    self.write_errors += 1

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
