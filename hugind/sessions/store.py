"""One session's directory: ``state.json`` (rewritten atomically) and a lock.

Layout::

    $HUGIND_HOME/sessions/<id>/state.json   the conversation and what it belongs to
    $HUGIND_HOME/sessions/<id>/lock         flock'ed while a run uses the session

The id is the one the backend gets as X-Session-ID, so it is a file name only
after checking: letters, digits, ``.``, ``_``, ``-``; no leading dot.

The ``sessions`` folder and each session's folder are hugind's own: a
symbolic link in their place is refused, and the lock is opened without
following one (``O_NOFOLLOW``), so nobody can make hugind create or lock a
file elsewhere.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from pathlib import Path
from typing import Any

from hugind.atomicfile import replace_atomically
from hugind.errors import UsageError
from hugind.host.openat2 import open_in
from hugind.llm.config import hugind_home
from hugind.userfile import read_state_file

SESSION_FORMAT = "hugind-session/1"
STATE_FILE = "state.json"
_ID = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$")


def sessions_root() -> Path:
    return hugind_home() / "sessions"


def valid_id(session_id: str) -> bool:
    return bool(_ID.match(session_id))


_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC


def _refuse_link(path: Path) -> None:
    if path.is_symlink():
        raise UsageError(f"cannot use the session directory {path}: it is a symbolic link, not hugind's own folder")


class SessionBusy(UsageError):
    """Another hugind process holds the session."""


class SessionStore:
    def __init__(self, session_id: str, root: Path | None = None) -> None:
        if not valid_id(session_id):
            raise UsageError(f"invalid session id {session_id!r} (letters, digits, '.', '_', '-')")
        self.id = session_id
        self._own_root = root is None  # hugind made this folder: a link there is not the user's
        self.dir = (root or sessions_root()) / session_id
        self.path = self.dir / STATE_FILE
        self._lock_fd: int | None = None

    def exists(self) -> bool:
        return self.path.is_file()

    def acquire(self) -> None:
        """Hold the session for this process (the kernel drops the lock if it dies)."""
        if self._lock_fd is not None:
            return
        try:
            if self._own_root:
                _refuse_link(self.dir.parent)
            _refuse_link(self.dir)
            self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            _refuse_link(self.dir)  # made by someone else between the check and mkdir
            fd = open_in(self.dir, "lock", _LOCK_FLAGS, 0o600)  # no link below the dir
        except OSError as exc:
            raise UsageError(f"cannot use the session directory {self.dir}: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SessionBusy(f"session {self.id} is in use by another hugind run") from None
        self._lock_fd = fd
        for stale in self.dir.glob(".state-*.tmp"):  # a write cut short by a kill; nobody else writes now
            with contextlib.suppress(OSError):
                stale.unlink()

    def release(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing drops the lock
            self._lock_fd = None

    def in_use(self) -> bool:
        """True while some process holds the lock (a live run)."""
        try:
            fd = open_in(self.dir, "lock", os.O_RDONLY)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def load(self) -> dict[str, Any]:
        missing = f"no session {self.id} (list them with: hugind sessions)"
        return read_state_file(self.path, SESSION_FORMAT, "session", missing)

    def save(self, doc: dict[str, Any]) -> None:
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        _refuse_link(self.dir)
        data = json.dumps({"format": SESSION_FORMAT, **doc}, ensure_ascii=False, default=str).encode()
        replace_atomically(self.path, data)

    def remove(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        with contextlib.suppress(FileNotFoundError):
            (self.dir / "lock").unlink()
        with contextlib.suppress(OSError):
            self.dir.rmdir()
