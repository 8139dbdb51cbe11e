"""Answers for input lines of `hugind serve` that are not JSON-RPC messages.

The MCP SDK's stdio transport hands such a line to the server as an
exception, and the server drops it: a client that sent broken JSON or a
malformed request waited for an answer that never came. JSON-RPC 2.0 says
what to answer instead: a Parse error (-32700) for text that is not JSON, an
Invalid Request (-32600) for JSON that is not a message, with the request's
id when it has a usable one and null otherwise. :func:`answer_malformed`
sits between the transport and the server and does that.
"""

from __future__ import annotations

from typing import Any

MAX_CAUSE = 200  # characters of the validator's text quoted back: enough to name the cause
# At the end of input, how long requests under way may still take to be answered: a
# server whose client left must end, even if a handler never answers.
SETTLE_TIMEOUT = 60.0


def _request_id(errors: list[dict[str, Any]]) -> int | str | None:
    """The id of the malformed object, when it is a JSON-RPC id (a string or an integer)."""
    for error in errors:
        candidate = error.get("input")
        if isinstance(candidate, dict):
            value = candidate.get("id")
            if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
                return value
    return None


def error_for(exc: Exception) -> tuple[int, str, int | str | None]:
    """(code, message, id) of the JSON-RPC error that answers a line the transport refused."""
    import mcp.types as types

    errors_of = getattr(exc, "errors", None)
    errors: list[dict[str, Any]] = errors_of() if callable(errors_of) else []
    if any(e.get("type") == "json_invalid" for e in errors) or not errors:
        cause = next((str(e.get("msg", "")) for e in errors), "") or str(exc) or type(exc).__name__
        return types.PARSE_ERROR, f"Parse error: the line is not JSON ({cause[:MAX_CAUSE]})", None
    first = errors[0]
    where = ".".join(str(part) for part in first.get("loc", ()) if not isinstance(part, int))
    cause = f"{where}: {first.get('msg', '')}" if where else str(first.get("msg", ""))
    message = f"Invalid Request: not a JSON-RPC 2.0 request, notification or response ({cause[:MAX_CAUSE]})"
    return types.INVALID_REQUEST, message, _request_id(errors)


class AnswerLedger:
    """The server's write stream, keeping count of the requests still unanswered: at the
    end of input the server is kept reading until they are (a client may send its last
    request and close its end at once; it still gets the answer)."""

    def __init__(self, inner: Any) -> None:
        import anyio

        self._inner = inner
        self._open: set[int | str] = set()
        self._answered = anyio.Event()

    def asked(self, request_id: int | str) -> None:
        self._open.add(request_id)

    def withdrawn(self, request_id: Any) -> None:
        """A request the client cancelled: the server sends no answer to it."""
        self._open.discard(request_id)

    async def settled(self) -> None:
        import anyio

        with anyio.move_on_after(SETTLE_TIMEOUT):
            while self._open:
                self._answered = anyio.Event()
                await self._answered.wait()

    async def send(self, item: Any) -> None:
        await self._inner.send(item)
        request_id = getattr(item.message, "id", None)
        if request_id is not None and not hasattr(item.message, "method"):  # a response or an error
            self._open.discard(request_id)
            self._answered.set()

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> AnswerLedger:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self._inner.__aexit__(*exc)


async def answer_malformed(source: Any, sink: Any, ledger: AnswerLedger) -> None:
    """Forward ``source``'s messages to ``sink`` (the server's read stream); answer each
    line the transport could not read through ``ledger``, and never pass it on. At the
    end of input, ``sink`` closes once every request forwarded has been answered."""
    import mcp.types as types
    from mcp.shared.message import SessionMessage

    async with sink:
        async for item in source:
            if not isinstance(item, Exception):
                if isinstance(item.message, types.JSONRPCRequest):
                    ledger.asked(item.message.id)
                elif getattr(item.message, "method", None) == "notifications/cancelled":
                    ledger.withdrawn((getattr(item.message, "params", None) or {}).get("requestId"))
                await sink.send(item)
                continue
            code, message, request_id = error_for(item)
            error = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))
            await ledger.send(SessionMessage(error))
        await ledger.settled()
