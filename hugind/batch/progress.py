"""What the user sees while a batch runs, on stderr: a one-line progress bar (terminals only)
or, with ``--json``, NDJSON events. Neither ever goes where the results go."""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from typing import IO, Any

from hugind.batch.item import STATUSES, ItemResult


class Tally:
    """Counts by status, and the clock of the run."""

    def __init__(self, total: int, skipped: int) -> None:
        self.total = total  # items this run executes
        self.skipped = skipped  # done by an earlier run (--resume)
        self.counts: Counter[str] = Counter()
        self.started = time.monotonic()

    def add(self, result: ItemResult) -> None:
        self.counts[result.status] += 1

    @property
    def done(self) -> int:
        return sum(self.counts.values())

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def summary(self) -> dict[str, int]:
        return {status: self.counts[status] for status in STATUSES}


class Reporter:
    """No output at all: stderr is not a terminal and --json was not asked for."""

    def started(self, tally: Tally, concurrency: int | None) -> None:
        pass

    def item_done(self, tally: Tally, result: ItemResult) -> None:
        pass

    def finished(self, tally: Tally) -> None:
        pass


class ProgressBar(Reporter):
    """One line, redrawn in place; at most ten redraws a second."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self._last_draw = 0.0

    def started(self, tally: Tally, concurrency: int | None) -> None:
        self._draw(tally)

    def item_done(self, tally: Tally, result: ItemResult) -> None:
        now = time.monotonic()
        if now - self._last_draw >= 0.1 or tally.done == tally.total:
            self._last_draw = now
            self._draw(tally)

    def finished(self, tally: Tally) -> None:
        self._draw(tally)
        self.stream.write("\n")
        self.stream.flush()

    def _draw(self, tally: Tally) -> None:
        width = shutil.get_terminal_size((80, 24)).columns
        rate = tally.done / tally.elapsed if tally.elapsed > 0 else 0.0
        counts = " ".join(f"{s} {n}" for s, n in tally.summary().items() if n)
        text = f" {tally.done}/{tally.total}  {counts}  {rate:.1f}/s"
        bar_width = max(10, min(40, width - len(text) - 3))
        filled = bar_width * tally.done // tally.total if tally.total else bar_width
        line = f"[{'#' * filled}{'.' * (bar_width - filled)}]{text}"
        self.stream.write("\r" + line[: width - 1] + "\x1b[K")
        self.stream.flush()


class JsonEvents(Reporter):
    """``--json``: started, item_done (in completion order), finished; one JSON object a line."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def _emit(self, event: str, **fields: Any) -> None:
        self.stream.write(json.dumps({"event": event, **fields}, ensure_ascii=False) + "\n")
        self.stream.flush()

    def started(self, tally: Tally, concurrency: int | None) -> None:
        self._emit("started", items=tally.total, skipped=tally.skipped, concurrency=concurrency)

    def item_done(self, tally: Tally, result: ItemResult) -> None:
        self._emit(
            "item_done",
            id=result.id,
            index=result.index,
            status=result.status,
            exit_code=result.exit_code,
            elapsed_s=result.elapsed_s,
            done=tally.done,
            total=tally.total,
        )

    def finished(self, tally: Tally) -> None:
        self._emit("finished", **tally.summary(), skipped=tally.skipped, elapsed_s=round(tally.elapsed, 3))
