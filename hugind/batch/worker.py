"""The worker process's side of the local pool: receive items, run each in-process, send results.

A worker lives for the whole batch, so the interpreter start, the imports and
the engine load are paid once per worker instead of once per item.
"""

from __future__ import annotations

import os
import signal
from multiprocessing.connection import Connection

from hugind.batch.item import BatchItem, BatchRunOptions, run_item


def serve(conn: Connection, agent_path: str, options: BatchRunOptions) -> None:
    # Ctrl-C is the parent's to handle: it ends the batch and stops the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The parent's stdout may be the results stream: nothing a worker prints may land there.
    os.dup2(2, 1)
    while True:
        try:
            item: BatchItem | None = conn.recv()
        except (EOFError, OSError):
            return  # the parent has gone
        if item is None:
            return
        conn.send(run_item(agent_path, item, options))
