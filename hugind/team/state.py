"""The state directory of a workflow run: ``state.json``, task logs, a lock.

``state.json`` is rewritten after every task starts and finishes, always
atomically (a temp file in the same directory, fsync, rename), so a reader or
a crash sees either the previous complete state or the next one, never a
torn file. ``--resume`` reads it back; tasks that were running when the
process died are simply run again.

Layout::

    DIR/state.json        tasks (spec, status, result, error, timings, runs), memory, messages
    DIR/logs/<task>.log   what the task's agent printed (stdout and stderr)
    DIR/lock              held (flock) while a run uses the directory

The state directory is often inside a working tree a cloned repository
controls: the lock and the logs are opened without following a symbolic
link (``O_NOFOLLOW``), and a link in place of ``logs`` is refused, so a
planted link cannot make hugind create or append to a file elsewhere.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from hugind.atomicfile import replace_atomically
from hugind.errors import UsageError
from hugind.host.openat2 import open_in
from hugind.userfile import read_state_file

STATE_FORMAT = "hugind-team-state/1"
STATE_FILE = "state.json"


def refuse_links(base: Path, path: Path) -> None:
    """UsageError if ``path`` or any of its folders below ``base`` is a symbolic link."""
    current = base
    for part in path.relative_to(base).parts:
        current = current / part
        if current.is_symlink():
            raise UsageError(f"cannot use the state directory {path}: {current} is a symbolic link")


class StateStore:
    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.path = directory / STATE_FILE
        self.logs = directory / "logs"

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the directory for this process (released by the kernel if it dies)."""
        try:
            refuse_links(self.dir, self.logs)
            self.logs.mkdir(parents=True, exist_ok=True)
            refuse_links(self.dir, self.logs)
            fd = open_in(self.dir, "lock", os.O_RDWR | os.O_CREAT, 0o600)  # no link below the dir
        except OSError as exc:
            raise UsageError(f"cannot use the state directory {self.dir}: {exc.strerror}") from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise UsageError(f"another `hugind team` run is using the state directory {self.dir}") from None
            yield
        finally:
            os.close(fd)  # closing drops the lock

    def exists(self) -> bool:
        return self.path.is_file()

    def load(self) -> dict[str, Any]:
        missing = f"nothing to resume: {self.dir} holds no {STATE_FILE}"
        return read_state_file(self.path, STATE_FORMAT, "team state", missing)

    def save(self, doc: dict[str, Any]) -> None:
        data = json.dumps({"format": STATE_FORMAT, **doc}, ensure_ascii=False, indent=1).encode()
        replace_atomically(self.path, data)

    def clear(self) -> None:
        """Forget a previous run (``--fresh``)."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        shutil.rmtree(self.logs, ignore_errors=True)
        self.logs.mkdir(parents=True, exist_ok=True)

    def log_path(self, task_id: str) -> Path:
        return self.logs / f"{task_id}.log"

    def open_log(self, task_id: str) -> IO[bytes]:
        """The task's log, for appending; a symbolic link there is refused (UsageError)."""
        path = self.log_path(task_id)
        try:
            fd = open_in(self.dir, f"logs/{path.name}", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            raise UsageError(f"cannot open the task's log {path}: {exc.strerror}") from None
        return os.fdopen(fd, "ab")
