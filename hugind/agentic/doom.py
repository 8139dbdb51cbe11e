"""Doom-loop guard: the same failing call (same name and arguments) over and over.

A call that fails with identical arguments on consecutive turns gets a
warning appended to its result on the second-to-last strike; on the
``threshold``-th strike the guard trips and the loop stops asking for tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from hugind.agentic.dispatch import Outcome


@dataclass
class DoomLoopGuard:
    threshold: int = 3
    _streaks: dict[str, int] = field(default_factory=dict)

    def observe(self, outcomes: Sequence[Outcome]) -> str | None:
        """Update streaks with one turn's outcomes; return a reason when tripped."""
        streaks: dict[str, int] = {}
        tripped: str | None = None
        for outcome in outcomes:
            if outcome.ok:
                continue
            key = outcome.signature
            count = self._streaks.get(key, 0) + 1
            streaks[key] = count
            if self.threshold <= 0:
                continue
            if count >= self.threshold and tripped is None:
                tripped = (
                    f"the call {_short(key)} failed {count} times in a row with the same arguments "
                    f"(last error: {_short(outcome.text, 160)})"
                )
            elif count == self.threshold - 1:
                outcome.text += (
                    f"\n\nNote: this exact call has now failed {count} times in a row. Do not repeat it "
                    "unchanged: fix the arguments, use another tool, or answer without it."
                )
        self._streaks = streaks
        return tripped


def _short(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
