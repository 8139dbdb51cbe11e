"""What the loop hands its checkpoint hook after every turn, and takes back to resume.

A checkpoint is taken when the conversation is whole: at the start (system and
user messages), after each turn's tool results are appended, and when the run
ends. Resuming from one continues with the next chat request: the same
messages, the turns already made counted against ``max_turns``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hugind.llm.types import Usage

RUNNING, FINISHED, FAILED, INTERRUPTED = "running", "finished", "failed", "interrupted"


@dataclass
class ToolRecord:
    turn: int
    name: str
    call_id: str | None
    ok: bool
    chars: int  # the result text itself is in the messages


@dataclass
class Checkpoint:
    messages: list[dict[str, Any]]
    turn: int  # chat requests made so far
    tool_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    tools: list[ToolRecord] = field(default_factory=list)
    status: str = RUNNING
    final_text: str = ""
    stop_reason: str = ""
    error: str = ""


CheckpointHook = Callable[[Checkpoint], None]
