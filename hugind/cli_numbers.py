"""The numbers the command line takes, checked before anything runs.

``--timeout 0`` or ``--fuel -1`` is a mistake on the command line, not a
limit the run then hits: it is a usage error (exit 2) that names the option,
one line like hugind's other usage errors. Typer calls ``problem`` through
each option's callback (cli.py); the quick parser (cli_quick.py) hands a value
that fails it to Typer, so both roads say the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Bound:
    least: float
    open_below: bool  # True: the value must be above ``least``, not equal to it
    what: str  # what the option counts, for the message

    def problem(self, value: float) -> str | None:
        if isinstance(value, float) and not math.isfinite(value):
            return f"must be a finite number of {self.what}"
        if value < self.least or (self.open_below and value == self.least):
            above = "above" if self.open_below else "at least"
            return f"must be {above} {self.least:g} ({self.what}), not {value:g}"
        return None


BOUNDS: dict[str, Bound] = {
    "--timeout": Bound(0, True, "seconds"),
    "--fuel": Bound(1, False, "fuel units"),
    "--concurrency": Bound(1, False, "items at once"),
    "--max-parallel": Bound(1, False, "tasks at once"),
    "--prune": Bound(0, False, "days"),
}


def problem(option: str, value: float | None) -> str | None:
    """Why ``value`` is no value for ``option`` (None: it is one, or was not given)."""
    bound = BOUNDS.get(option)
    return None if value is None or bound is None else bound.problem(value)
