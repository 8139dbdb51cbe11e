"""Repeat guard: the same successful call asked for again, turn after turn.

Small models often call a tool, get its result, and call it again with the
same arguments instead of answering (seen with a 0.5B model: six identical
``read_note`` calls until the turn budget ran out). A turn whose calls are
all repeats of calls that just succeeded is not run again: each call gets the
earlier result back with a short note that it was already made. After
``limit`` such turns in a row the guard trips and the loop asks for the final
answer.

Only repeats of the most recent turn that ran something count: a call made
again after other calls ran (a test re-run after an edit) runs normally,
since its result may have changed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from hugind.agentic.calls import CallItem, ParsedCall
from hugind.agentic.dispatch import Outcome
from hugind.agentic.events import LoopEvent, ToolEnd, ToolStart
from hugind.agentic.trace import Tracer

REPEAT_NOTE = (
    "Note: you already called {call}; its result is below, the same as before. Do not call it again: "
    "write your final answer now, using this result."
)


@dataclass
class RepeatGuard:
    limit: int = 3
    _recent: dict[str, str] = field(default_factory=dict)  # signature -> result text of the last turn that ran
    _streak: int = 0

    def cached(self, items: Sequence[CallItem]) -> list[str] | None:
        """The earlier results when every call of this turn repeats one that just succeeded."""
        if self.limit <= 0 or not items or not all(isinstance(i, ParsedCall) for i in items):
            return None
        texts = [self._recent.get(item.signature()) for item in items]
        if any(t is None for t in texts):
            return None
        return [t for t in texts if t is not None]

    def ran(self, outcomes: Sequence[Outcome]) -> None:
        """A turn that ran its calls: its successful results become the ones repeats get back."""
        self._recent = {o.signature: o.text for o in outcomes if o.ok and isinstance(o.item, ParsedCall)}
        self._streak = 0

    def repeated(self, items: Sequence[CallItem]) -> str | None:
        """Count a turn answered from the earlier results; a reason when the limit is reached."""
        self._streak += 1
        if self._streak < self.limit:
            return None
        names = ", ".join(sorted({i.signature() for i in items}))
        return f"the call {_short(names)} was repeated {self._streak} times after it had succeeded"


def answer_repeats(
    items: Sequence[CallItem],
    texts: Sequence[str],
    *,
    turn: int,
    emit: Callable[[LoopEvent], None],
    tracer: Tracer,
) -> list[Outcome]:
    """Outcomes for repeated calls, served from the earlier results (nothing runs)."""
    outcomes = []
    for index, (item, earlier) in enumerate(zip(items, texts, strict=True)):
        assert isinstance(item, ParsedCall)
        emit(ToolStart(turn, index, item.name, dict(item.args), item.id))
        text = f"{REPEAT_NOTE.format(call=_short(item.signature(), 200))}\n\n{earlier}"
        emit(ToolEnd(turn, index, item.name, 0.0, len(text), True))
        tracer.line(f"  tool {item.name}: the same call as before; its earlier result sent back")
        outcomes.append(Outcome(item, item.name, text, True, 0.0, item.id))
    return outcomes


def _short(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
