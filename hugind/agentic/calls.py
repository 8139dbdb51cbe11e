"""What the parsers produce: a parsed tool call, or a failure to report back."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Union


@dataclass(frozen=True)
class ParsedCall:
    name: str
    args: dict[str, Any] = field(default_factory=dict)
    raw: str = ""
    id: str | None = None  # the backend's tool_call_id (native calls)

    @property
    def args_json(self) -> str:
        return json.dumps(self.args, ensure_ascii=False)

    def signature(self) -> str:
        """Name plus canonical arguments: equal for calls that do the same thing."""
        try:
            canon = json.dumps(self.args, sort_keys=True, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            canon = repr(self.args)
        return f"{self.name}({canon})"


@dataclass(frozen=True)
class ParseFailure:
    """Something that was meant as a tool call but could not be understood."""

    raw: str
    error: str
    name: str | None = None
    id: str | None = None

    def signature(self) -> str:
        return f"<unparsable {self.name or 'call'}>({self.error})"


CallItem = Union[ParsedCall, ParseFailure]
