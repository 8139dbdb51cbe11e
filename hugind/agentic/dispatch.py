"""Run one turn's tool calls and collect their results in call order.

Parse failures, unknown tools and missing required arguments are answered
here with an error text the model can act on; ``activate_skill`` is served
from the skill set; everything else goes to the executor in one batch (it
may run the calls concurrently).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hugind.agentic.calls import CallItem, ParsedCall, ParseFailure
from hugind.agentic.events import LoopEvent, ToolEnd, ToolStart
from hugind.agentic.skills import ACTIVATE_SKILL, SkillSet
from hugind.agentic.tools import ToolExecutor, ToolOutput, ToolResult, ToolSpec
from hugind.agentic.trace import Tracer
from hugind.errors import HostCallError, HugindError

TEXT_FORMAT_HINT = 'Write each call exactly as <tool_call>{"name": "tool_name", "args": {...}}</tool_call>.'


class ExecutorContractError(HugindError):
    """The executor broke its contract (wrong number of results)."""


@dataclass
class Outcome:
    item: CallItem
    label: str  # the tool name shown to the model
    text: str
    ok: bool
    duration_s: float
    call_id: str | None = None

    @property
    def signature(self) -> str:
        return self.item.signature()


def failure_text(failure: ParseFailure, native: bool) -> str:
    hint = "" if native else f" {TEXT_FORMAT_HINT}"
    return f"Error: could not parse this tool call: {failure.error}.{hint}"


def is_error_text(text: str) -> bool:
    return text.lstrip()[:6].lower() == "error:" or text.lstrip()[:6].lower() == "error "


def dispatch(
    items: Sequence[CallItem],
    *,
    tools: dict[str, ToolSpec],
    executor: ToolExecutor,
    skills: SkillSet | None,
    turn: int,
    native: bool,
    emit: Callable[[LoopEvent], None],
    tracer: Tracer,
    max_result_chars: int,
) -> list[Outcome]:
    outcomes: list[Outcome | None] = [None] * len(items)
    batch: list[tuple[int, ParsedCall]] = []
    for index, item in enumerate(items):
        name = item.name or "tool_call"
        args = item.args if isinstance(item, ParsedCall) else {}
        emit(ToolStart(turn, index, name, dict(args), item.id))
        early = _answer_locally(item, tools, skills, native)
        if early is None:
            batch.append((index, item))  # type: ignore[arg-type]
        else:
            outcomes[index] = Outcome(item, name, early[0], early[1], early[2], item.id)
    if batch:
        for (index, call), outcome in zip(batch, _run_batch([c for _, c in batch], executor), strict=True):
            outcome.call_id = call.id
            outcomes[index] = outcome
    done: list[Outcome] = []
    for index, outcome in enumerate(outcomes):
        assert outcome is not None
        outcome.text = _truncate(outcome.text, max_result_chars)
        emit(ToolEnd(turn, index, outcome.label, round(outcome.duration_s, 6), len(outcome.text), outcome.ok))
        args = outcome.item.args if isinstance(outcome.item, ParsedCall) else outcome.item.raw
        tracer.tool(outcome.label, args, outcome.duration_s, len(outcome.text), outcome.ok)
        done.append(outcome)
    return done


def _answer_locally(
    item: CallItem, tools: dict[str, ToolSpec], skills: SkillSet | None, native: bool
) -> tuple[str, bool, float] | None:
    """(text, ok, seconds) when the call is answered without the executor."""
    if isinstance(item, ParseFailure):
        return failure_text(item, native), False, 0.0
    if item.name == ACTIVATE_SKILL and skills:
        started = time.monotonic()
        text, ok = skills.run_activate(item.args)
        return text, ok, time.monotonic() - started
    spec = tools.get(item.name)
    if spec is None:
        known = sorted(tools) + ([ACTIVATE_SKILL] if skills else [])
        return (
            f"Error: unknown tool '{item.name}'. Available tools: {', '.join(known) or 'none'}.",
            False,
            0.0,
        )
    missing = [p for p in spec.required if p not in item.args]
    if missing:
        expected = ", ".join(spec.param_names)
        return (
            f"Error: missing required argument(s) {', '.join(missing)} for '{item.name}' (parameters: {expected}).",
            False,
            0.0,
        )
    return None


def _run_batch(calls: list[ParsedCall], executor: ToolExecutor) -> list[Outcome]:
    started = time.monotonic()
    try:
        results: Sequence[ToolOutput] = executor.execute(list(calls))
    except HostCallError as exc:
        elapsed = time.monotonic() - started
        return [Outcome(c, c.name, f"Error: {exc.kind}: {exc.message}", False, elapsed) for c in calls]
    elapsed = time.monotonic() - started
    results = list(results)
    if len(results) != len(calls):
        raise ExecutorContractError(f"tool executor returned {len(results)} result(s) for {len(calls)} call(s)")
    return [_outcome(call, result, elapsed) for call, result in zip(calls, results, strict=True)]


def _outcome(call: ParsedCall, result: ToolOutput | object, batch_elapsed: float) -> Outcome:
    if isinstance(result, ToolResult):
        text = result.content or "OK"
        duration = result.duration_s if result.duration_s is not None else batch_elapsed
        return Outcome(call, call.name, text, not result.is_error and not is_error_text(text), duration)
    if result is None:
        text = "OK"
    elif isinstance(result, str):
        text = result or "OK"
    else:
        text = json.dumps(result, ensure_ascii=False, default=str)
    return Outcome(call, call.name, text, not is_error_text(text), batch_elapsed)


def _truncate(text: str, limit: int) -> str:
    if limit <= 0 or len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... truncated: {len(text) - limit} more characters]"
