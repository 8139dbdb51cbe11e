"""Conversation messages the loop appends, and shrinking them on overflow.

Text format: tool results go back as one user message
``"Tool results:\\n\\n[name] result\\n\\n[name2] result2"``. Native format:
one ``role: tool`` message per call with its ``tool_call_id``. Role
alternation is kept (no two user messages in a row): the closing notice is
merged into a preceding user message.

A call the model wrote as text while native tools are on is written back in
the native form (an assistant message with ``tool_calls`` and ids, then the
``tool`` messages): a chat template renders only that as a call that was
answered. ``plain_request`` is the closing request for models that did not
take in their results: the request and the results as one plain user
message, with no system prompt and no tools.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from hugind.agentic.calls import CallItem, ParsedCall
from hugind.agentic.dispatch import Outcome

Message = dict[str, Any]
MAX_TURNS_NOTICE = "You have reached the maximum number of turns. Please provide your final answer now."
ELIDED = "[tool result removed to fit the model's context window]"


def assistant_text(raw_content: str) -> Message:
    return {"role": "assistant", "content": raw_content}


def assistant_native(raw_content: str, items: Sequence[CallItem]) -> Message:
    """The assistant turn with its tool calls, arguments re-serialised.

    Unreadable arguments are sent back as ``{}``: some servers (llama.cpp)
    parse the arguments in the history and would reject the request.
    """
    calls = []
    for item in items:
        args = item.args_json if isinstance(item, ParsedCall) else "{}"
        calls.append({"id": item.id, "type": "function", "function": {"name": item.name or "", "arguments": args}})
    return {"role": "assistant", "content": raw_content, "tool_calls": calls}


def with_ids(items: Sequence[CallItem], turn: int) -> list[CallItem]:
    """Text-parsed calls given the ids a native call would carry (``call_TURN_INDEX``)."""
    out: list[CallItem] = []
    for index, item in enumerate(items):
        if item.id:
            out.append(item)
        elif isinstance(item, ParsedCall):
            out.append(replace(item, id=f"call_{turn}_{index}"))
        else:
            out.append(replace(item, id=f"call_{turn}_{index}", name=item.name or "tool_call"))
    return out


def text_results(outcomes: Sequence[Outcome]) -> Message:
    body = "\n\n".join(f"[{o.label}] {o.text}" for o in outcomes)
    return {"role": "user", "content": f"Tool results:\n\n{body}"}


def native_results(outcomes: Sequence[Outcome]) -> list[Message]:
    return [{"role": "tool", "tool_call_id": o.call_id or "", "content": o.text} for o in outcomes]


def add_notice(messages: list[Message], notice: str) -> None:
    """Append ``notice`` for the model, merged into a trailing user message."""
    last = messages[-1] if messages else None
    if last is not None and last.get("role") == "user" and isinstance(last.get("content"), str):
        last["content"] = f"{last['content']}\n\n{notice}"
    else:
        messages.append({"role": "user", "content": notice})


def plain_request(request: str, results: Sequence[tuple[str, str]], notice: str) -> list[Message]:
    """The closing request with no tool machinery: what was asked, what the tools said, answer now."""
    body = "\n\n".join(f"[{label}] {text}" for label, text in results)
    return [{"role": "user", "content": f"{request}\n\nTool results:\n\n{body}\n\n{notice}"}]


def compact(messages: list[Message], keep_last: int = 1) -> bool:
    """Drop the bulk of the largest old tool results; True if anything shrank.

    The system prompt, the user's request and the newest ``keep_last`` result
    messages stay intact.
    """
    results = [i for i, m in enumerate(messages) if _is_result(m)]
    candidates = results[:-keep_last] if keep_last > 0 else results
    candidates = [i for i in candidates if len(str(messages[i].get("content", ""))) > len(ELIDED) * 2]
    if not candidates and results:
        candidates = [i for i in results if len(str(messages[i].get("content", ""))) > len(ELIDED) * 2]
    if not candidates:
        return False
    candidates.sort(key=lambda i: len(str(messages[i].get("content", ""))), reverse=True)
    for i in candidates[: max(1, (len(candidates) + 1) // 2)]:
        message = messages[i]
        original = str(message.get("content", ""))
        if message.get("role") == "tool":
            message["content"] = ELIDED
        else:
            message["content"] = f"Tool results:\n\n{ELIDED} (was {len(original)} characters)"
    return True


def _is_result(message: Message) -> bool:
    if message.get("role") == "tool":
        return True
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, str) and content.startswith("Tool results:")


def preview_args(item: CallItem) -> str:
    if isinstance(item, ParsedCall):
        return json.dumps(item.args, ensure_ascii=False, default=str)
    return item.raw
