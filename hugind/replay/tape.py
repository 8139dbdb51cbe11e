"""The two tapes a run can carry: a ``Recorder`` (``--record``) or a ``Player`` (``hugind replay``).

A run reaches them through one observer (``hugind/replay/observer.py``),
which puts them at its seams: the dispatcher, the WASI interposer, the audit
log, the loop's chat client and MCP hub. The recorder writes what each seam
observed; the player answers each seam from the record and stops the run at
the first request that differs from the recorded one.

The record has independent orders ("channels"): the guest's (host ops,
completions as delivered, clock, random and stdin reads: the guest is
single-threaded, so this order is the same on every faithful replay), the
loop's chat calls, the loop's MCP calls (parallel: matched by request), and
the audit entries (re-emitted, in recorded order, as replay passes the
events they preceded).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hugind.errors import RecordInvalid, ReplayDiverged
from hugind.replay.format import AUDIT, CHAT, END, GUEST_KINDS, MCP_CALL, MCP_OFFER, canonical
from hugind.replay.reader import Record
from hugind.replay.scrub import Scrubber
from hugind.replay.writer import RecordWriter

SHOWN = 240  # characters of a request shown in a divergence message


def describe(event: dict[str, Any] | None) -> str:
    """An event as a divergence message names it."""
    if event is None:
        return "nothing (the record ends here)"
    kind = event.get("k")
    req = event.get("req")
    if isinstance(req, dict) and "op" in req:
        text = f"{req['op']} {canonical(req.get('args', {}))}"
    elif isinstance(req, dict) and "raw" in req:
        text = f"a malformed request {req['raw']!r}"
    elif kind == "clock":
        text = f"a clock read (clock {event.get('clock')})"
    elif kind == "random":
        text = f"{event.get('n')} random bytes"
    elif kind == "read":
        text = f"a read of fd {event.get('fd')}"
    elif kind == "deliver":
        text = "the guest waiting for a completion"
    elif kind == CHAT:
        text = f"an LLM request ({event.get('req', {}).get('digest', '?')})"
    else:
        text = str(kind)
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


class Recorder:
    """Writes every seam's observation; the header first (observer.py's ``on_start``), the closing line last."""

    def __init__(self, writer: RecordWriter, code: str, agent_path: str) -> None:
        self.writer = writer
        self.code = code
        self.agent_path = agent_path
        self.closed_digest: str | None = None
        self.outcome: dict[str, Any] = {}

    def append(self, body: dict[str, Any], *, sync: bool = False) -> int:
        return self.writer.append(body, sync=sync)

    def whole(self, tokens: list[str]) -> list[str]:
        """Streamed tokens, those a secret spans joined (scrub.py), so the writer finds it."""
        return self.writer.scrubber.tokens(tokens)

    def finish(self, exit_code: int, message: str | None = None) -> str:
        """The closing line (whatever the outcome) and the file's digest."""
        if self.closed_digest is None:
            end = {"k": END, "events": self.writer.count - 1, "exit": exit_code, **self.outcome}
            if message is not None:
                end["error"] = message
            self.writer.append(end, sync=True)
            self.closed_digest = self.writer.close()
        return self.closed_digest


@dataclass
class _Channel:
    events: list[dict[str, Any]] = field(default_factory=list)
    at: int = 0


class Player:
    """Answers the seams from a record, in order, checking each request."""

    def __init__(self, record: Record, scrubber: Scrubber, code: str, allow_changed: bool = False) -> None:
        self.record = record
        self.scrub = scrubber
        self.code = code
        self.allow_changed = allow_changed
        self.warnings: list[str] = []
        self._lock = threading.RLock()
        self._channels: dict[str, _Channel] = {"guest": _Channel(), "chat": _Channel(), "mcp": _Channel()}
        self._audit: list[dict[str, Any]] = []
        self._audit_at = 0
        self.on_audit: Callable[[str], None] = lambda line: None
        for event in record.events:
            kind = event.get("k")
            if kind in GUEST_KINDS:
                self._channels["guest"].events.append(event)
            elif kind == CHAT:
                self._channels["chat"].events.append(event)
            elif kind in (MCP_OFFER, MCP_CALL):
                self._channels["mcp"].events.append(event)
            elif kind == AUDIT:
                self._audit.append(event)
            elif kind != END:
                raise RecordInvalid(
                    f"{record.path}: line {event.get('seq', -1) + 1} has an unknown event kind {kind!r}"
                )

    # ---- audit ------------------------------------------------------------------

    def _emit_audit_before(self, seq: float) -> None:
        while self._audit_at < len(self._audit) and self._audit[self._audit_at]["seq"] < seq:
            line = self._audit[self._audit_at].get("line")
            self._audit_at += 1
            if isinstance(line, str):
                self.on_audit(self.scrub.restore(line))

    def flush_audit(self) -> None:
        with self._lock:
            self._emit_audit_before(float("inf"))

    # ---- taking events -------------------------------------------------------------

    def _past_end(self, asked: str) -> Exception:
        if self.record.complete:
            last = self.record.events[-1]["seq"] if self.record.events else 0
            return ReplayDiverged(
                f"replay diverged after op #{last}: the agent asked {asked}, past the end of the record"
            )
        last = self.record.events[-1]["seq"] if self.record.events else 0
        return RecordInvalid(
            f"the record is incomplete (the recorded run did not finish): it ends at line {last + 1}, "
            f"and the agent went on to ask {asked}"
        )

    def take(self, channel: str, kinds: tuple[str, ...], asked: str, matches: Callable[[dict[str, Any]], bool]) -> dict:
        """The next event of ``channel``; a divergence unless its kind is one of ``kinds`` and it ``matches``."""
        with self._lock:
            chan = self._channels[channel]
            if chan.at >= len(chan.events):
                raise self._past_end(asked)
            event = chan.events[chan.at]
            if event.get("k") not in kinds or not matches(event):
                raise ReplayDiverged(
                    f"replay diverged at op #{event['seq']}: the agent asked {asked}, the record has {describe(event)}"
                )
            chan.at += 1
            self._emit_audit_before(event["seq"])
            return event

    def take_matching(self, channel: str, kind: str, key: str, asked: str) -> dict:
        """The first unused event of ``channel`` whose canonical request is ``key`` (parallel calls)."""
        with self._lock:
            chan = self._channels[channel]
            for i in range(chan.at, len(chan.events)):
                event = chan.events[i]
                if event.get("k") == kind and canonical(event.get("req")) == key and not event.get("_used"):
                    event["_used"] = True
                    while chan.at < len(chan.events) and chan.events[chan.at].get("_used"):
                        chan.at += 1
                    self._emit_audit_before(event["seq"])
                    return event
            if chan.at >= len(chan.events):
                raise self._past_end(asked)
            event = chan.events[chan.at]
            raise ReplayDiverged(
                f"replay diverged at op #{event['seq']}: the agent asked {asked}, the record has {describe(event)}"
            )

    def unused(self) -> dict[str, Any] | None:
        """The first event of any channel replay has not reached (a run that did less than recorded)."""
        left = [c.events[c.at] for c in self._channels.values() if c.at < len(c.events)]
        left = [e for e in left if not e.get("_used")]
        return min(left, key=lambda e: e["seq"]) if left else None

    def ended(self, exc: BaseException | None) -> None:
        if isinstance(exc, ReplayDiverged | RecordInvalid):
            return
        if exc is None:
            with self._lock:
                left = self.unused()
            if left is not None:
                raise ReplayDiverged(
                    f"replay diverged at op #{left['seq']}: the run ended, the record has {describe(left)}"
                )
        self.flush_audit()
