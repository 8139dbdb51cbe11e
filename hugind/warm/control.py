"""``hugind warm``: this user's warm servers, and stopping them.

A server names itself ``hugind-warm`` (``/proc/PID/comm``); its runs are its
children; the last word of its command line is the hugind package directory
it serves (spawn.py), by which ``hugind warm`` shows this install's servers
unless asked for all. Stopping one is SIGTERM: it stops listening at once and ends after
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
    install: str | None  # the hugind package directory it serves (None: a server that does not say)


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
        with open(f"{base}/cmdline", "rb") as f:
            words = f.read().split(b"\0")
    except (OSError, KeyError, ValueError, IndexError):
        return None  # gone meanwhile, or not ours to read
    rss = int(fields.get("VmRSS", "0 kB").split()[0])
    return WarmServer(pid, max(0.0, boot_s - started), rss, runs, _install(words))


def _install(words: list[bytes]) -> str | None:
    """The package directory in a server's command line (``-c BOOT KEY DIR``, spawn.py)."""
    while words and not words[-1]:
        words = words[:-1]  # the command line ends with a NUL
    if len(words) < 4 or words[-4] != b"-c":
        return None  # a server started by an older hugind: its install is not known
    return os.fsdecode(words[-1])


def this_install() -> str:
    import hugind

    return os.path.dirname(hugind.__file__)


def servers(install: str | None = None) -> list[WarmServer]:
    """This user's warm servers, oldest first; only those serving ``install`` when given."""
    boot_s = time.clock_gettime(time.CLOCK_BOOTTIME)
    uid = os.geteuid()
    found = [s for entry in os.listdir("/proc") if entry.isdigit() and (s := _server(int(entry), uid, boot_s))]
    if install is not None:
        found = [s for s in found if s.install == install]
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


def render(found: list[WarmServer], all_installs: bool = False) -> str:
    """A table with a header line; with ``all_installs`` a column says which install each serves."""
    if not found:
        where = "" if all_installs else " for this install (--all: every install's)"
        return f"no warm server is running{where}"
    header = f"{'PID':>8}  {'AGE':>8}  {'MEMORY (RSS)':>12}  {'RUNS NOW':>8}"
    lines = [header + ("  INSTALL" if all_installs else "")]
    for s in found:
        row = f"{s.pid:>8}  {s.age_s:>7.0f}s  {s.rss_kib / 1024:>8.1f} MiB  {s.runs:>8}"
        lines.append(row + (f"  {s.install or '(unknown: an older hugind)'}" if all_installs else ""))
    return "\n".join(lines)
