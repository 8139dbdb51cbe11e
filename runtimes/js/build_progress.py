"""What the engine build shows a newcomer while ``pip install`` runs it, without ``-v``.

pip runs a build backend with its output captured and shows it only with
``-v`` (or when the build fails): the engine build, about a minute of zig the
first time, would pass as a silent spinner. pip does not detach the backend
from the terminal it was started at, so the backend can still open that
terminal, ``/dev/tty``, and write to it directly. ``Progress`` does that when
stderr is not itself a terminal and a terminal can be opened; otherwise
(pip -v at a terminal, a CI log, no terminal at all) it writes to stderr,
where pip's log keeps it. Lines begin on a line of their own, so pip's
spinner line is left as it was; a line every ``HEARTBEAT_S`` says the build
is still going and for how long.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from typing import TextIO

HEARTBEAT_S = 15.0
# Measured: a build from nothing (zig's wasm32-wasi libc included) takes ~70 s of
# CPU; the six units compile in parallel, so a free 2-core machine needs about a
# minute, a busy one longer.
ESTIMATE = "about 70 s of CPU time the first time (~1 minute on a free 2-core machine, longer on a busy one)"


def _terminal() -> TextIO | None:
    """The controlling terminal, when stderr is not it already (pip captures stderr)."""
    try:
        if os.isatty(2):
            return None
    except OSError:
        pass
    try:
        return open("/dev/tty", "w", encoding="utf-8", errors="replace")
    except OSError:  # no controlling terminal: a CI job, a daemon
        return None


class Progress:
    """Lines about the build on the user's terminal (or stderr), with the time so far."""

    def __init__(self, stream: TextIO | None = None, heartbeat_s: float = HEARTBEAT_S) -> None:
        self._tty = _terminal() if stream is None else None
        self._out = stream or self._tty or sys.stderr
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._heartbeat_s = heartbeat_s
        self._beating: threading.Thread | None = None
        self._first = True

    @property
    def on_terminal(self) -> bool:
        return self._tty is not None

    def elapsed(self) -> float:
        return time.monotonic() - self._started

    def say(self, text: str) -> None:
        with self._lock:
            # The first line leaves pip's spinner line ("Preparing ... -") and starts its own.
            lead = "\n" if self._first and self._tty is not None else ""
            self._first = False
            try:
                self._out.write(f"{lead}hugind: {text}\n")
                self._out.flush()
            except (OSError, ValueError):  # the terminal went away: the build goes on regardless
                pass

    def heartbeat(self, doing: str) -> None:
        """From now until ``close``: a line every few seconds that ``doing`` goes on."""
        if self._beating is not None:
            return

        def beat() -> None:
            while not self._stop.wait(self._heartbeat_s):
                self.say(f"still {doing}: {self.elapsed():.0f} s so far")

        self._beating = threading.Thread(target=beat, name="hugind-build-heartbeat", daemon=True)
        self._beating.start()

    def close(self) -> None:
        self._stop.set()
        if self._beating is not None:
            self._beating.join()
        if self._tty is not None:
            with contextlib.suppress(OSError):
                self._tty.close()
