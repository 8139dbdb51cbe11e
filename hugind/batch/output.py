"""The results file: one JSON line per item, in input order, each flushed as written.

Items finish in any order; a finished item waits in memory until every item
before it is written, so the file is always an in-order prefix of the batch
(plus nothing torn but, after a crash, its last line). ``--resume`` reads the
ids already written, cuts a torn last line off, and appends the rest.
"""

from __future__ import annotations

import json
import os
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from hugind import jsontext
from hugind.batch.item import ItemResult
from hugind.errors import UsageError
from hugind.userfile import DATA_LIMIT, read_user_file


@dataclass
class Done:
    """What a results file already holds: the ids written and their statuses."""

    statuses: dict[str, str] = field(default_factory=dict)
    torn_bytes: int = 0  # cut off the end (an unfinished last line)


def read_done(path: Path) -> Done:
    """The items of an earlier run's results; cuts a torn last line off the file."""
    if not os.path.lexists(path):
        return Done()  # nothing done yet: --resume on a fresh file starts the batch
    data = read_user_file(path, "the results to resume", limit=DATA_LIMIT)
    done = Done()
    end = data.rfind(b"\n") + 1
    if end < len(data):
        done.torn_bytes = len(data) - end
        _truncate(path, end)
    for number, raw in enumerate(data[:end].split(b"\n")[:-1], start=1):
        if not raw.strip():
            continue
        try:
            doc = jsontext.loads(raw)
            done.statuses[str(doc["id"])] = str(doc["status"])
        except (ValueError, KeyError, TypeError):
            raise UsageError(f"{path} line {number} is not a hugind batch result; not resuming from it") from None
    return done


def _truncate(path: Path, size: int) -> None:
    try:
        with open(path, "r+b") as f:
            f.truncate(size)
    except OSError as exc:
        raise UsageError(f"cannot cut the torn last line of {path}: {exc.strerror or exc}") from None


class OrderedWriter:
    """Writes results in input order; ``expected`` are the indices this run produces, ascending."""

    def __init__(self, stream: IO[str], expected: list[int]) -> None:
        self._stream = stream
        self._order = expected
        self._next = 0  # position in _order of the next line to write
        self._waiting: dict[int, ItemResult] = {}

    def add(self, result: ItemResult) -> None:
        self._waiting[result.index] = result
        while self._next < len(self._order) and self._order[self._next] in self._waiting:
            self._write(self._waiting.pop(self._order[self._next]))
            self._next += 1

    @property
    def pending(self) -> int:
        return len(self._waiting)

    def _write(self, result: ItemResult) -> None:
        self._stream.write(json.dumps(_plain(result.to_json()), ensure_ascii=False) + "\n")
        self._stream.flush()  # a crash loses no line written


def _plain(doc: dict[str, Any]) -> dict[str, Any]:
    """An agent's value is JSON already; anything else (a bug) becomes its repr, not a lost line."""
    try:
        json.dumps(doc["result"])
    except (TypeError, ValueError):
        doc["result"] = repr(doc["result"])
    return doc


def open_results(path: Path | None, *, append: bool) -> IO[str]:
    import sys

    if path is None:
        return sys.stdout
    try:
        return open(path, "a" if append else "w", encoding="utf-8")  # the caller closes it
    except OSError as exc:
        raise UsageError(f"cannot open {path} for the results: {exc.strerror or exc}") from None


def fsync_quietly(stream: IO[str]) -> None:
    with suppress(OSError, ValueError, AttributeError):  # a pipe or a terminal: nothing to sync
        os.fsync(stream.fileno())
