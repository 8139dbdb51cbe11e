"""Finding and ending the warm servers (hugind/warm) a test started, by their key."""

from __future__ import annotations

import contextlib
import os
import signal


def servers(key: str) -> list[int]:
    """Pids of the warm servers started with ``HUGIND_WARM_KEY=key`` (it is in their environment)."""
    found = []
    marker = f"HUGIND_WARM_KEY={key}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if marker in f.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:
            continue
    return found


def end_servers(key: str) -> None:
    for pid in servers(key):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
