"""``ask_llm`` / ``ask_llm_stream``: the guest's LLM calls.

The run orchestration puts an ``LlmService`` in ``ctx.services["llm"]`` (it
knows the backend and how to call it); this module only adapts guest
requests to it, so the host floor never depends on the agentic layer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from hugind.errors import InvalidArgument, PermissionDenied
from hugind.host.registry import HostContext, Op


class LlmService(Protocol):
    def ask(self, request: Any, *, stream: bool, on_token: Callable[[str], None] | None) -> str: ...


def _service(ctx: HostContext) -> LlmService:
    service = ctx.services.get("llm")
    if service is None:
        raise PermissionDenied("llm: this run has no LLM backend (set `backend:` in agent.yaml or pass --backend)")
    return service


def _request(args: dict[str, Any]) -> Any:
    if isinstance(args.get("prompt"), str):
        return args["prompt"]
    if isinstance(args.get("request"), dict):
        return args["request"]
    raise InvalidArgument("ask_llm takes a prompt string or a request object")


def _ask(ctx: HostContext, args: dict[str, Any]) -> str:
    return _service(ctx).ask(_request(args), stream=False, on_token=None)


def _ask_stream(ctx: HostContext, args: dict[str, Any], progress: Callable[[Any], None]) -> str:
    return _service(ctx).ask(_request(args), stream=True, on_token=progress)


OPS: tuple[Op, ...] = (
    Op("llm.ask", _ask, is_async=True, blocking=True),
    Op("llm.ask_stream", _ask_stream, is_async=True, streams=True, blocking=True),
)
