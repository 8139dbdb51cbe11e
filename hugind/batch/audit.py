"""``hugind batch --audit FILE``: one audit file for the whole batch, each entry tagged with its item.

Workers keep each item's decisions in memory and send them back with the
result; only this process writes the file, so lines never interleave.
"""

from __future__ import annotations

import json
from pathlib import Path

from hugind.batch.item import ItemResult
from hugind.errors import UsageError


class BatchAudit:
    def __init__(self, path: Path) -> None:
        try:
            self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        except OSError as exc:
            raise UsageError(f"cannot open audit log {path}: {exc.strerror}") from None

    def add(self, result: ItemResult) -> None:
        for entry in result.audit:
            self._file.write(json.dumps({"item": result.id, **entry}, ensure_ascii=False) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()
