"""Judge child processes from outside: by a marker in their command line.

Confined children live in their own PID namespace, so a pid they print
means nothing on the host; a unique word on their command line does.
"""

from __future__ import annotations

import os
import time
import uuid


def marker() -> str:
    """A number unique to one test, usable as a `sleep` argument (`sleep 60.<digits>`)."""
    return f"60.{uuid.uuid4().int % 10**12:012d}"


def _state(pid: str) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0].decode()
    except (OSError, IndexError):
        return None


def with_marker(word: str, program: str | None = None) -> list[int]:
    """Host pids of live (not zombie) processes whose command line contains ``word``
    (and, given ``program``, whose argv[0] ends with it)."""
    me = str(os.getpid())
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid == me:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if program is not None and not cmdline.split(b"\0", 1)[0].endswith(program.encode()):
            continue
        if word.encode() in cmdline and _state(pid) not in (None, "Z", "X"):
            found.append(int(pid))
    return found


def wait_gone(word: str, within: float = 3.0) -> list[int]:
    """Pids still carrying ``word`` after ``within`` seconds (normally none, at once)."""
    end = time.monotonic() + within
    while True:
        left = with_marker(word)
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.05)


def wait_present(word: str, within: float = 5.0, program: str | None = None, count: int = 1) -> list[int]:
    end = time.monotonic() + within
    while True:
        found = with_marker(word, program)
        if len(found) >= count or time.monotonic() > end:
            return found
        time.sleep(0.02)
