"""``hugind warm``: this user's warm servers, and stopping them.

A server names itself ``hugind-warm`` (``/proc/PID/comm``); its runs are its
children. Stopping one is SIGTERM: it stops listening at once and ends after
its last run (server.py), so no run under way is cut short.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass

NAME = "hugind-warm"


@dataclass(frozen=True)
class WarmServer:
    pid: int
    age_s: float
    rss_kib: int
    runs: int  # under way now


def _ticks_per_s() -> int:
    return os.sysconf("SC_CLK_TCK")


def _server(pid: int, uid: int, boot_s: float) -> WarmServer | None:
    base = f"/proc/{pid}"
    try:
        with open(f"{base}/comm") as f:
            if f.read().strip() != NAME:
                return None
        fields: dict[str, str] = {}
        with open(f"{base}/status") as f:
            for line in f:
                name, _, value = line.partition(":")
                fields[name] = value.strip()
        if int(fields["Uid"].split()[1]) != uid or fields["State"][:1] in ("Z", "X"):
            return None  # another user's, or ended and not yet reaped by its parent
        with open(f"{base}/stat") as f:
            started = int(f.read().rsplit(")", 1)[1].split()[19]) / _ticks_per_s()
        with open(f"{base}/task/{pid}/children") as f:
            runs = len(f.read().split())
    except (OSError, KeyError, ValueError, IndexError):
        return None  # gone meanwhile, or not ours to read
    rss = int(fields.get("VmRSS", "0 kB").split()[0])
    return WarmServer(pid, max(0.0, boot_s - started), rss, runs)


def servers() -> list[WarmServer]:
    """This user's warm servers, oldest first."""
    boot_s = time.clock_gettime(time.CLOCK_BOOTTIME)
    uid = os.geteuid()
    found = [s for entry in os.listdir("/proc") if entry.isdigit() and (s := _server(int(entry), uid, boot_s))]
    return sorted(found, key=lambda s: -s.age_s)


def stop(found: list[WarmServer]) -> list[WarmServer]:
    """Ask each server to stop (runs under way finish first); those that were still there."""
    stopped = []
    for server in found:
        try:
            os.kill(server.pid, signal.SIGTERM)
        except OSError:
            continue
        stopped.append(server)
    return stopped


def render(found: list[WarmServer]) -> str:
    if not found:
        return "no warm server is running"
    lines = [f"{'pid':>8}  {'age':>8}  {'RSS':>9}  runs"]
    for s in found:
        lines.append(f"{s.pid:>8}  {s.age_s:>7.0f}s  {s.rss_kib / 1024:>6.1f} MiB  {s.runs}")
    return "\n".join(lines)
