"""Accumulate streamed chat-completion chunks into one complete result.

Handles the shapes real servers send:

* vLLM: the first delta of a tool call carries ``id``/``type``/``function.name``,
  later deltas only ``function.arguments`` fragments, keyed by ``index``;
* llama.cpp: the same, the first delta may already carry an argument fragment;
* Ollama: each chunk carries whole tool calls, possibly each at ``index`` 0, so a
  new ``id`` (or a new name after complete arguments) starts a new call;
* reasoning in ``delta.reasoning_content`` (llama.cpp, older vLLM) or
  ``delta.reasoning`` (vLLM, Ollama);
* ``usage`` in a final chunk with empty ``choices``;
* an ``{"error": ...}`` object in the middle of the stream (raised as
  :class:`StreamErrorPayload` for the client to classify).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hugind import jsontext
from hugind.llm.types import ChatResult, NativeToolCall, Usage, arguments_text, content_text

TokenCallback = Callable[[str], None]


class StreamErrorPayload(Exception):
    """The stream carried an error object instead of a chunk."""

    def __init__(self, payload: Any) -> None:
        super().__init__("error in stream")
        self.payload = payload


@dataclass
class _PendingCall:
    index: int
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def args_text(self) -> str:
        return "".join(self.arguments)

    def args_complete(self) -> bool:
        text = self.args_text().strip()
        if not text:
            return False
        try:
            jsontext.loads(text)
        except ValueError:
            return False
        return True


class StreamAccumulator:
    def __init__(self, on_token: TokenCallback | None = None, on_reasoning: TokenCallback | None = None):
        self._on_token = on_token
        self._on_reasoning = on_reasoning
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._calls: list[_PendingCall] = []
        self._latest: dict[int, _PendingCall] = {}
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.model = ""
        self.tokens_emitted = 0
        self.chunks = 0

    def feed(self, chunk: Any) -> None:
        if not isinstance(chunk, Mapping):
            return
        if chunk.get("error") is not None:
            raise StreamErrorPayload(chunk)
        self.chunks += 1
        if isinstance(chunk.get("model"), str):
            self.model = chunk["model"]
        usage = Usage.from_dict(chunk.get("usage"))
        if usage is not None:
            self.usage = usage
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices:
            return
        choice = choices[0]
        if not isinstance(choice, Mapping):
            return
        delta = choice.get("delta")
        if not isinstance(delta, Mapping):
            delta = choice.get("message") if isinstance(choice.get("message"), Mapping) else {}
        self._feed_delta(delta)
        if choice.get("finish_reason"):
            self.finish_reason = str(choice["finish_reason"])

    def _feed_delta(self, delta: Mapping[str, Any]) -> None:
        text = content_text(delta.get("content"))
        if text:
            self._content.append(text)
            self.tokens_emitted += 1
            if self._on_token is not None:
                self._on_token(text)
        for key in ("reasoning_content", "reasoning", "thinking"):
            value = delta.get(key)
            if isinstance(value, str) and value:
                self._reasoning.append(value)
                if self._on_reasoning is not None:
                    self._on_reasoning(value)
                break
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            for position, raw in enumerate(calls):
                if isinstance(raw, Mapping):
                    self._feed_call(position, raw)

    def _feed_call(self, position: int, raw: Mapping[str, Any]) -> None:
        index = raw.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            index = position
        fn = raw.get("function") if isinstance(raw.get("function"), Mapping) else {}
        call_id = raw.get("id") if isinstance(raw.get("id"), str) else ""
        name = fn.get("name") if isinstance(fn.get("name"), str) else ""
        args = arguments_text(fn.get("arguments"))
        current = self._latest.get(index)
        if current is None or self._starts_new_call(current, call_id, name):
            current = _PendingCall(index=index)
            self._calls.append(current)
            self._latest[index] = current
        if call_id and not current.id:
            current.id = call_id
        if name:
            current.name = name
        if args:
            current.arguments.append(args)

    @staticmethod
    def _starts_new_call(current: _PendingCall, call_id: str, name: str) -> bool:
        if call_id and current.id and call_id != current.id:
            return True
        return bool(name and current.name and current.args_complete())

    def result(self) -> ChatResult:
        calls = [
            NativeToolCall(id=c.id, name=c.name, arguments_json=c.args_text())
            for c in self._calls
            if c.name or c.arguments
        ]
        return ChatResult(
            content="".join(self._content),
            reasoning="".join(self._reasoning),
            tool_calls=calls,
            finish_reason=self.finish_reason,
            usage=self.usage,
            model=self.model,
        )
