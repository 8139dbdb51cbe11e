"""The agentic loop's seam: its LLM calls and its direct MCP calls, recorded or answered.

The loop runs in the host, so what it gets from the model (each ChatResult,
and the streamed tokens when it streams) never crosses the dispatcher. The
recording client wraps the real one; the replaying one answers from the
record and never builds a client or opens a socket. A request is compared
through its digest (messages, tools, extra options) and the record keeps the
last message for the divergence message. LLM errors are recorded by class
and message and raised again on replay.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from typing import Any

from hugind.llm import errors as llm_errors
from hugind.llm.types import ChatResult, NativeToolCall, Usage
from hugind.replay.format import CHAT, MCP_CALL, MCP_OFFER, canonical, digest_of
from hugind.replay.tape import Player, Recorder

SHOWN_MESSAGE = 2000


def chat_request(messages: Sequence[Mapping[str, Any]], tools: Any, extra: Any) -> dict[str, Any]:
    last = dict(messages[-1]) if messages else {}
    content = last.get("content")
    if isinstance(content, str) and len(content) > SHOWN_MESSAGE:
        last["content"] = content[:SHOWN_MESSAGE] + "..."
    return {"digest": digest_of({"messages": list(messages), "tools": tools, "extra": extra}), "last": last}


def _result_json(result: ChatResult) -> dict[str, Any]:
    data = asdict(result)
    data["usage"] = result.usage.to_dict() if result.usage else None
    return data


def _result_from(data: dict[str, Any]) -> ChatResult:
    usage = data.get("usage")
    return ChatResult(
        content=data.get("content", ""),
        reasoning=data.get("reasoning", ""),
        tool_calls=[NativeToolCall(**c) for c in data.get("tool_calls", [])],
        finish_reason=data.get("finish_reason"),
        usage=Usage(**usage) if isinstance(usage, dict) else None,
        elapsed_s=float(data.get("elapsed_s", 0.0)),
        attempts=int(data.get("attempts", 1)),
        model=data.get("model", ""),
    )


def _error_from(data: dict[str, Any]) -> Exception:
    cls = getattr(llm_errors, str(data.get("type", "")), None)
    message = str(data.get("message", "the LLM backend failed (recorded)"))
    if isinstance(cls, type) and issubclass(cls, llm_errors.BackendCallError):
        return cls(message, detail=str(data.get("detail", "")), status=data.get("status"))
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            return cls(message)
        except TypeError:
            pass
    from hugind.errors import BackendError

    return BackendError(message)


class RecordingChat:
    def __init__(self, client: Any, tape: Recorder) -> None:
        self._client = client
        self._tape = tape

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        stream: bool = False,
        on_token: Callable[[str], None] | None = None,
        response_format: Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> ChatResult:
        tokens: list[str] = []

        def token(text: str) -> None:
            tokens.append(text)
            if on_token is not None:
                on_token(text)

        req = chat_request(messages, tools, extra)
        try:
            result = self._client.complete(
                messages, tools=tools, stream=stream, on_token=token, response_format=response_format, extra=extra
            )
        except Exception as exc:
            error = {
                "type": type(exc).__name__,
                "message": getattr(exc, "message", str(exc)),
                "detail": getattr(exc, "detail", ""),
                "status": getattr(exc, "status", None),
            }
            self._tape.append({"k": CHAT, "req": req, "error": error, "tokens": self._tape.whole(tokens)}, sync=True)
            raise
        taped = {"k": CHAT, "req": req, "result": _result_json(result), "tokens": self._tape.whole(tokens)}
        self._tape.append(taped, sync=True)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class ReplayChat:
    def __init__(self, player: Player) -> None:
        self._player = player

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        stream: bool = False,
        on_token: Callable[[str], None] | None = None,
        response_format: Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> ChatResult:
        req = chat_request(messages, tools, extra)
        key = self._player.scrub.text(canonical(req["digest"]))
        asked = f"an LLM request ({req['digest']}) ending with {canonical(req['last'])[:200]}"
        event = self._player.take("chat", (CHAT,), asked, lambda e: canonical(e.get("req", {}).get("digest")) == key)
        scrub = self._player.scrub  # a declared value the model sent comes back as this host has it
        if on_token is not None:
            for text in event.get("tokens", []):
                on_token(scrub.restore(str(text)))
        if "error" in event:
            raise _error_from(scrub.restored(event["error"]))
        return _result_from(scrub.restored(event["result"]))

    def close(self) -> None:
        pass


class RecordingMcp:
    """The run's MCP hub, its loop-facing calls recorded (the guest's go through the dispatcher)."""

    def __init__(self, hub: Any, tape: Recorder) -> None:
        self._hub = hub
        self._tape = tape

    def offered_tools(self, policy: Any, deadline: float) -> Any:
        tools = self._hub.offered_tools(policy, deadline)
        self._tape.append({"k": MCP_OFFER, "req": {}, "tools": tools}, sync=True)
        return tools

    def call_tool(self, policy: Any, route: str, args: Any, deadline: float) -> Any:
        from hugind.errors import HostCallError

        req = {"route": route, "args": args}
        try:
            result = self._hub.call_tool(policy, route, args, deadline)
        except HostCallError as err:
            self._tape.append({"k": MCP_CALL, "req": req, "error": err.to_wire()}, sync=True)
            raise
        self._tape.append({"k": MCP_CALL, "req": req, "result": result}, sync=True)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._hub, name)


class ReplayMcp:
    """No server is started: listings and calls come from the record."""

    def __init__(self, player: Player, declared: bool) -> None:
        self._player = player
        self.specs = declared  # the loop offers MCP tools only for agents that declare servers
        self.child_proxy: Any = None

    def offered_tools(self, policy: Any, deadline: float) -> Any:
        return self._player.take("mcp", (MCP_OFFER,), "the MCP tool listing", lambda e: True).get("tools", [])

    def call_tool(self, policy: Any, route: str, args: Any, deadline: float) -> Any:
        from hugind.errors import HostCallError

        req = {"route": route, "args": args}
        key = self._player.scrub.text(canonical(req))
        event = self._player.take_matching("mcp", MCP_CALL, key, f"MCP tool {route} {canonical(args)[:200]}")
        if "error" in event:
            err = HostCallError(str(event["error"].get("message", "")))
            err.kind = str(event["error"].get("kind", "HostError"))
            raise err
        return event.get("result")

    def close(self) -> None:
        pass
