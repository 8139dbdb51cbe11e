"""The local pool: long-lived worker processes, each running one item at a time in-process.

Why processes, not threads: the guest runs in wasmtime (outside the GIL) but the
host side of every call runs Python, so threads serialise on the GIL; and a
worker stuck beyond its item's deadline (a host call that ignores it, a bug) can
only be ended by killing a process. Workers are forked from a forkserver that
has imported hugind once (never from this process, which may hold wasmtime's
threads); each worker then loads the engine once and keeps it for its items.

A worker that does not answer within the item's timeout + ``grace`` is killed
and replaced; its item is reported as ``timeout``. A worker that dies is
replaced; its item is reported as ``error``.
"""

from __future__ import annotations

import multiprocessing
import time
from collections import deque
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from hugind.batch.item import TIMEOUT, BatchItem, BatchRunOptions, ItemResult, error_result, run_item
from hugind.errors import ExitCode

DEFAULT_GRACE_S = 10.0  # beyond the item's own deadline, which the sandbox enforces itself
_PRELOAD = ["hugind.batch.worker", "hugind.run"]


@dataclass
class _Worker:
    process: Any  # multiprocessing.Process
    conn: Connection
    item: BatchItem | None = None
    deadline: float = 0.0

    @property
    def pid(self) -> int | None:
        return self.process.pid


class LocalPool:
    def __init__(
        self,
        agent_path: str,
        options: BatchRunOptions,
        *,
        concurrency: int,
        item_timeout: float,
        grace: float = DEFAULT_GRACE_S,
    ) -> None:
        self.agent_path = agent_path
        self.options = options
        self.concurrency = max(1, concurrency)
        self.limit = item_timeout + grace
        self.workers: list[_Worker] = []  # live ones (tests read their pids)
        self._ctx = multiprocessing.get_context("forkserver")
        self._ctx.set_forkserver_preload(_PRELOAD)

    def run(self, items: Iterable[BatchItem], on_done: Callable[[ItemResult], None]) -> None:
        """Run every item; ``on_done`` gets each result as it completes (in any order)."""
        queue: deque[BatchItem] = deque()
        for item in items:
            if item.problem is not None:
                on_done(run_item(self.agent_path, item, self.options))  # reported without a worker
            else:
                queue.append(item)
        try:
            self._drive(queue, on_done)
        finally:
            self.close()

    def _drive(self, queue: deque[BatchItem], on_done: Callable[[ItemResult], None]) -> None:
        while queue or any(w.item is not None for w in self.workers):
            while queue and len(self.workers) < self.concurrency:
                self.workers.append(self._start())
            for worker in self.workers:
                if worker.item is None and queue:
                    self._assign(worker, queue.popleft())
            busy = [w for w in self.workers if w.item is not None]
            now = time.monotonic()
            ready = wait([w.conn for w in busy], timeout=max(0.0, min(w.deadline for w in busy) - now))
            for worker in busy:
                if worker.conn in ready:
                    on_done(self._collect(worker))
                elif time.monotonic() >= worker.deadline:
                    on_done(self._give_up(worker))

    def _start(self) -> _Worker:
        from hugind.batch.worker import serve

        ours, theirs = self._ctx.Pipe()
        process = self._ctx.Process(
            target=serve, args=(theirs, self.agent_path, self.options), name="hugind-batch-worker", daemon=True
        )
        process.start()
        theirs.close()
        return _Worker(process, ours)

    def _assign(self, worker: _Worker, item: BatchItem) -> None:
        worker.item = item
        worker.deadline = time.monotonic() + self.limit
        started = time.monotonic()
        try:
            worker.conn.send(item)
        except OSError:
            worker.deadline = started  # dead already: the next wait reports it at once

    def _collect(self, worker: _Worker) -> ItemResult:
        item = worker.item
        assert item is not None
        try:
            result: ItemResult = worker.conn.recv()
            worker.item = None
            return result
        except (EOFError, OSError):
            code = self._retire(worker)
            return error_result(
                item, f"the worker process running this item died ({_how(code)})", exit_code=ExitCode.INTERNAL
            )

    def _give_up(self, worker: _Worker) -> ItemResult:
        item = worker.item
        assert item is not None
        self._retire(worker)
        return error_result(
            item,
            f"no result within {self.limit:g} s (the item's timeout plus grace): its worker was killed",
            status=TIMEOUT,
            exit_code=ExitCode.LIMIT_EXCEEDED,
        )

    def _retire(self, worker: _Worker) -> int | None:
        """Kill and forget one worker (a new one is started when there is work)."""
        worker.process.kill()
        worker.process.join(5)
        worker.conn.close()
        self.workers.remove(worker)
        return worker.process.exitcode

    def close(self) -> None:
        for worker in self.workers:
            with suppress(OSError):  # already gone
                worker.conn.send(None)
        deadline = time.monotonic() + 2
        for worker in self.workers:
            worker.process.join(max(0.0, deadline - time.monotonic()))
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join(5)
            worker.conn.close()
        self.workers.clear()


def _how(exitcode: int | None) -> str:
    if exitcode is None:
        return "it did not exit"
    if exitcode < 0:
        return f"signal {-exitcode}"
    return f"exit status {exitcode}"
