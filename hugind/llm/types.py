"""Plain data returned by the chat client."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    @classmethod
    def from_dict(cls, data: Any) -> Usage | None:
        if not isinstance(data, Mapping):
            return None
        prompt = _int(data.get("prompt_tokens", data.get("input_tokens")))
        completion = _int(data.get("completion_tokens", data.get("output_tokens")))
        total = _int(data.get("total_tokens")) or prompt + completion
        return cls(prompt, completion, total)

    def __add__(self, other: Usage | None) -> Usage:
        if other is None:
            return self
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


@dataclass(frozen=True)
class NativeToolCall:
    """A tool call the backend returned in ``message.tool_calls``."""

    id: str
    name: str
    arguments_json: str

    def to_message_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments_json},
        }


def arguments_text(value: Any) -> str:
    """Tool-call arguments as the JSON string OpenAI specifies (some servers send objects)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


@dataclass
class ChatResult:
    content: str = ""
    reasoning: str = ""
    tool_calls: list[NativeToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage | None = None
    elapsed_s: float = 0.0
    attempts: int = 1
    model: str = ""


def content_text(value: Any) -> str:
    """Message content as text: strings pass, lists of parts are joined."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for part in value:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "".join(parts)
    return str(value)
