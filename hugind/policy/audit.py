"""The audit log: one JSON object per policy decision, appended as a line.

Entry: ``{"ts", "capability", "op", "request", "decision": "allow"|"deny", "rule"}``.
Requests are recorded as the guest made them, minus anything that could
carry a host secret: environment mappings are dropped, credential headers
are masked, long strings are cut.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

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


class AuditLog:
    """Thread-safe JSON-lines sink; also keeps the last ``keep`` entries in memory."""

    def __init__(self, path: str | Path | None = None, *, keep: int = 10_000) -> None:
        self.path = Path(path) if path is not None else None
        self.entries: deque[dict[str, Any]] = deque(maxlen=keep)
        self.write_errors = 0
        self._lock = threading.Lock()
        self._file: TextIO | None = None
        if self.path is not None:
            try:
                self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
            except OSError as exc:
                raise UsageError(f"cannot open audit log {self.path}: {exc.strerror}") from None

    def write(self, capability: str, request: dict[str, Any], allowed: bool, rule: str) -> dict[str, Any]:
        entry = {
            "ts": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "capability": capability,
            "op": request.get("op", ""),
            "request": redact(request),
            "decision": "allow" if allowed else "deny",
            "rule": rule,
        }
        line = json.dumps(entry, ensure_ascii=False, sort_keys=False)
        with self._lock:
            self.entries.append(entry)
            if self._file is not None:
                try:
                    self._file.write(line + "\n")
                    self._file.flush()
                except OSError:
                    self.write_errors += 1
        return entry

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
