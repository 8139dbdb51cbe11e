"""Host side of the JS ``ask_llm(prompt | request)`` and ``ask_llm_stream`` globals.

A string prompt becomes one user message and asks for JSON output
(``response_format: {"type": "json_object"}``), as the reference runtime
does. A request object is passed through as the request body (``messages``
or ``prompt``/``system``, plus any other fields) with no response_format
injected. The answer comes back as text with ``<think>`` blocks removed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hugind.agentic.thinking import strip_thinking
from hugind.errors import InvalidArgument

JSON_OBJECT = {"type": "json_object"}
_CALLBACK_KEYS = {"on_token", "onToken"}
_OWN_KEYS = {"messages", "prompt", "system", "stream"} | _CALLBACK_KEYS


@dataclass
class AskRequest:
    messages: list[dict[str, Any]]
    response_format: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def build_ask_request(request: str | Mapping[str, Any]) -> AskRequest:
    if isinstance(request, str):
        return AskRequest([{"role": "user", "content": request}], dict(JSON_OBJECT))
    if not isinstance(request, Mapping):
        raise InvalidArgument("ask_llm takes a prompt string or a request object")
    if "messages" in request:
        messages = request["messages"]
        if not isinstance(messages, list) or not messages or not all(_is_message(m) for m in messages):
            raise InvalidArgument("ask_llm: 'messages' must be a non-empty list of {role, content} objects")
        messages = [dict(m) for m in messages]
    elif isinstance(request.get("prompt"), str):
        messages = []
        if isinstance(request.get("system"), str) and request["system"]:
            messages.append({"role": "system", "content": request["system"]})
        messages.append({"role": "user", "content": request["prompt"]})
    else:
        raise InvalidArgument("ask_llm: a request object needs 'messages' or 'prompt'")
    extra = {k: v for k, v in request.items() if k not in _OWN_KEYS}
    return AskRequest(messages, None, extra)


def _is_message(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("role"), str) and "content" in value


def ask_llm(
    client: Any,
    request: str | Mapping[str, Any],
    *,
    stream: bool = False,
    on_token: Callable[[str], None] | None = None,
) -> str:
    """One chat request; the answer's text without thinking."""
    ask = build_ask_request(request)
    result = client.complete(
        ask.messages,
        stream=stream,
        on_token=on_token if stream else None,
        response_format=ask.response_format,
        extra=ask.extra or None,
    )
    return strip_thinking(result.content)


def ask_llm_stream(client: Any, request: str | Mapping[str, Any], on_token: Callable[[str], None] | None = None) -> str:
    return ask_llm(client, request, stream=True, on_token=on_token)
