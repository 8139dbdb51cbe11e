"""Loop events, for an NDJSON stream or any other consumer.

Each event is a frozen dataclass with a ``type`` tag; ``to_dict()`` gives the
JSON object (with a wall-clock ``ts``). Order within a run::

    session (a persisted run: its id, and the turns it resumes after)
    turn_start, llm_response, (tool_start, tool_end)*, turn_start, ..., final, usage
    error (then the loop raises)

``backend_switch`` (and ``backend_refused``, for a fallback the agent's network
policy refused) come between ``turn_start`` and that turn's ``llm_response``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Protocol, TextIO, Union


def _now() -> float:
    return round(time.time(), 3)


@dataclass(frozen=True)
class _Event:
    type: ClassVar[str] = "event"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **asdict(self), "ts": _now()}


@dataclass(frozen=True)
class TurnStart(_Event):
    type: ClassVar[str] = "turn_start"
    turn: int
    messages: int
    final: bool = False  # the closing "give your final answer" call


@dataclass(frozen=True)
class LlmResponse(_Event):
    type: ClassVar[str] = "llm_response"
    turn: int
    elapsed_s: float
    attempts: int
    finish_reason: str | None
    content_chars: int
    reasoning_chars: int
    tool_calls: int
    native: bool
    usage: dict[str, int] | None = None


@dataclass(frozen=True)
class ToolStart(_Event):
    type: ClassVar[str] = "tool_start"
    turn: int
    index: int
    name: str
    args: dict[str, Any] = field(default_factory=dict)
    call_id: str | None = None


@dataclass(frozen=True)
class ToolEnd(_Event):
    type: ClassVar[str] = "tool_end"
    turn: int
    index: int
    name: str
    duration_s: float
    result_chars: int
    ok: bool


@dataclass(frozen=True)
class Final(_Event):
    type: ClassVar[str] = "final"
    text: str
    turns: int
    stop_reason: str  # "done" | "max_turns" | "doom_loop"
    detail: str = ""


@dataclass(frozen=True)
class ErrorEvent(_Event):
    type: ClassVar[str] = "error"
    kind: str
    message: str
    turn: int


@dataclass(frozen=True)
class UsageEvent(_Event):
    type: ClassVar[str] = "usage"
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    llm_calls: int


@dataclass(frozen=True)
class BackendSwitch(_Event):
    """The backend failed (``reason``); the next of its fallbacks takes over."""

    type: ClassVar[str] = "backend_switch"
    source: str  # backend labels: name and URL, never a key or header
    target: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "from": self.source, "to": self.target, "reason": self.reason, "ts": _now()}


@dataclass(frozen=True)
class BackendRefused(_Event):
    """A fallback URL written in agent.yaml that the agent's network policy refused: skipped."""

    type: ClassVar[str] = "backend_refused"
    backend: str
    reason: str


@dataclass(frozen=True)
class SessionStart(_Event):
    """A persisted run: ``hugind run AGENT --resume <id>`` continues it."""

    type: ClassVar[str] = "session"
    id: str
    resumed: bool
    turns: int  # turns already done (0 for a new run)


LoopEvent = Union[
    TurnStart,
    LlmResponse,
    ToolStart,
    ToolEnd,
    Final,
    ErrorEvent,
    UsageEvent,
    BackendSwitch,
    BackendRefused,
    SessionStart,
]


class EventSink(Protocol):
    def emit(self, event: LoopEvent) -> None: ...


class NdjsonSink:
    """Writes one JSON object per line and flushes (safe across threads)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._lock = threading.Lock()

    def emit(self, event: LoopEvent) -> None:
        line = json.dumps(event.to_dict(), ensure_ascii=False, default=str)
        with self._lock:
            self.stream.write(line + "\n")
            self.stream.flush()


class ListSink:
    def __init__(self) -> None:
        self.events: list[LoopEvent] = []

    def emit(self, event: LoopEvent) -> None:
        self.events.append(event)

    def of_type(self, kind: str) -> list[LoopEvent]:
        return [e for e in self.events if e.type == kind]


class _CallbackSink:
    def __init__(self, fn: Callable[[LoopEvent], None]) -> None:
        self.fn = fn

    def emit(self, event: LoopEvent) -> None:
        self.fn(event)


class _NullSink:
    def emit(self, event: LoopEvent) -> None:
        pass


def as_sink(events: EventSink | Callable[[LoopEvent], None] | None) -> EventSink:
    if events is None:
        return _NullSink()
    if hasattr(events, "emit"):
        return events  # type: ignore[return-value]
    if callable(events):
        return _CallbackSink(events)
    raise TypeError("events must have an emit(event) method or be callable")
