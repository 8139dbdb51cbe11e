"""The agentic loop: ask the model, run the tools it asks for, repeat.

::

    system = custom prompt + skills catalog + tools prompt
    loop up to max_turns:
        POST chat/completions
        strip <think> (raw text stays in history); find tool calls
        no calls -> the stripped text is the final answer (an echo of the tool list is not:
                    the model is told so and the loop goes on)
        run the calls (parse errors, unknown tools -> error results), append results
        calls that repeat the last turn's successful ones -> their earlier results, with a
                    note; repeat_limit such turns in a row -> the plain closing request
        same failing call N times in a row -> stop asking for tools
    out of turns -> "You have reached the maximum number of turns. ..." and one last call;
    no answer in it -> one plain closing request: the user's request and the tool results
    as one user message, no tools (what a 0.5B model answers; it repeats calls otherwise)

An empty final text means the model gave no answer; ``hugind run`` fails it
(``NoFinalAnswer``), and the session is saved as failed, not finished.

``checkpoint`` is called with the whole conversation at the start, after every
turn's tool results and at the end (``hugind.sessions`` persists it);
``resume_from`` continues from such a checkpoint instead of starting anew.

``tool_format``: ``text`` (tools described in the prompt, calls parsed from
text), ``native`` (OpenAI ``tools``; results as ``role: tool`` messages),
``auto`` (both offered; if the backend rejects ``tools`` the loop continues in
text format). While native tools are on, a call the model wrote as text is
written back in native form (``tool_calls`` with ids, ``tool`` results), so the
chat template shows it answered; in text format, results go back as the text
format's own ``Tool results:`` message.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TextIO

from hugind.agentic.calls import CallItem, ParsedCall, ParseFailure
from hugind.agentic.checkpoint import FAILED, FINISHED, INTERRUPTED, RUNNING, Checkpoint, CheckpointHook, ToolRecord
from hugind.agentic.dispatch import Outcome, dispatch
from hugind.agentic.doom import DoomLoopGuard
from hugind.agentic.events import (
    ErrorEvent,
    EventSink,
    Final,
    LlmResponse,
    LoopEvent,
    TurnStart,
    UsageEvent,
    as_sink,
)
from hugind.agentic.formats.common import args_from
from hugind.agentic.history import (
    MAX_TURNS_NOTICE,
    add_notice,
    assistant_native,
    assistant_text,
    compact,
    native_results,
    plain_request,
    text_results,
    with_ids,
)
from hugind.agentic.parse import parse_tool_calls, strip_tool_calls
from hugind.agentic.prompt import build_system_prompt, is_tool_list_echo, prompt_tools
from hugind.agentic.repeats import RepeatGuard, answer_repeats
from hugind.agentic.skills import SkillSet
from hugind.agentic.thinking import strip_thinking
from hugind.agentic.tools import ToolExecutor, ToolSpec
from hugind.agentic.trace import Tracer, make_tracer
from hugind.errors import UsageError
from hugind.llm.errors import ContextOverflowError, PermanentBackendError
from hugind.llm.types import ChatResult, NativeToolCall, Usage

TOOL_FORMATS = ("text", "native", "auto")
MAX_COMPACTIONS = 3
ECHO_NOTICE = (
    "That is a line of the tool list, not an answer. To use a tool, reply with a tool call; "
    "otherwise reply with your final answer in plain words."
)
PLAIN_NOTICE = "Answer the request above now, in plain words, using these tool results. Do not call any tool."


class ChatBackend(Protocol):
    """What the loop needs of a client (``hugind.llm.ChatClient`` fits)."""

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        stream: bool = False,
        on_token: Callable[[str], None] | None = None,
        response_format: Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> ChatResult: ...


@dataclass
class LoopResult:
    final_text: str
    turns: int  # chat requests made, the closing one included
    messages: list[dict[str, Any]]
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = "done"  # "done" | "max_turns" | "doom_loop"
    stop_detail: str = ""
    tool_calls: int = 0


def run_agentic_loop(
    client: ChatBackend,
    *,
    system_prompt: str,
    user_prompt: str,
    tools: Sequence[ToolSpec],
    executor: ToolExecutor,
    max_turns: int = 10,
    tool_format: str = "text",
    events: EventSink | Callable[[LoopEvent], None] | None = None,
    trace: bool | TextIO | None = None,
    skills: SkillSet | None = None,
    stream: bool = False,
    on_token: Callable[[str], None] | None = None,
    doom_threshold: int = 3,
    repeat_limit: int = 3,
    max_result_chars: int = 100_000,
    checkpoint: CheckpointHook | None = None,
    resume_from: Checkpoint | None = None,
) -> LoopResult:
    if tool_format not in TOOL_FORMATS:
        raise UsageError(f"tool_format must be one of {', '.join(TOOL_FORMATS)}, not {tool_format!r}")
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
        raise UsageError(f"max_turns must be a positive integer, not {max_turns!r}")
    loop = _Loop(client, list(tools), executor, tool_format, skills, stream, on_token, max_result_chars)
    loop.observe(as_sink(events), make_tracer(trace), DoomLoopGuard(doom_threshold))
    loop.repeats = RepeatGuard(repeat_limit)
    loop.checkpoint = checkpoint
    try:
        if resume_from is not None:
            loop.restore(resume_from)
        return loop.run(system_prompt, user_prompt, max_turns, resumed=resume_from is not None)
    except Exception as exc:
        loop.sink.emit(ErrorEvent(type(exc).__name__, str(exc), loop.turn))
        loop.tracer.line(f"error: {type(exc).__name__}: {exc}")
        loop.save(FAILED, error=f"{type(exc).__name__}: {exc}")
        raise
    except BaseException:  # Ctrl-C: the conversation so far stays resumable
        loop.save(INTERRUPTED, error="interrupted")
        raise


class _Loop:
    def __init__(
        self,
        client: ChatBackend,
        tools: list[ToolSpec],
        executor: ToolExecutor,
        tool_format: str,
        skills: SkillSet | None,
        stream: bool,
        on_token: Callable[[str], None] | None,
        max_result_chars: int,
    ) -> None:
        self.client = client
        self.tools = {t.name: t for t in tools}
        self.agent_tools = tools
        self.offered = prompt_tools(tools, skills)
        self.executor = executor
        self.tool_format = tool_format
        self.skills = skills
        self.stream = stream
        self.on_token = on_token
        self.max_result_chars = max_result_chars
        wants_native = tool_format != "text" and bool(self.offered)
        self.native_tools = [t.to_openai() for t in self.offered] if wants_native else None
        self.sink: EventSink = as_sink(None)
        self.tracer: Tracer = make_tracer(False)
        self.guard = DoomLoopGuard()
        self.repeats = RepeatGuard()
        self.results: dict[str, tuple[str, str]] = {}  # successful results by call signature
        self.messages: list[dict[str, Any]] = []
        self.usage = Usage()
        self.turn = 0
        self.tool_calls = 0
        self.tool_log: list[ToolRecord] = []
        self.checkpoint: CheckpointHook | None = None
        self.whole: Checkpoint | None = None  # the last checkpoint taken with the conversation whole

    def restore(self, point: Checkpoint) -> None:
        self.messages = [dict(m) for m in point.messages]
        self.turn = point.turn
        self.tool_calls = point.tool_calls
        self.usage = point.usage
        self.tool_log = list(point.tools)
        self.whole = point

    def save(self, status: str, *, final_text: str = "", stop_reason: str = "", error: str = "") -> None:
        if self.checkpoint is None:
            return
        if status in (RUNNING, FINISHED):
            point = Checkpoint(
                [dict(m) for m in self.messages],
                self.turn,
                self.tool_calls,
                self.usage,
                list(self.tool_log),
                status,
                final_text,
                stop_reason,
            )
            self.whole = point
        elif self.whole is not None:
            # A turn cut short (its reply without results, a request already counted) is not
            # stored: the conversation as it last was whole is, and resuming asks that turn again.
            point = replace(self.whole, status=status, error=error)
        else:
            return
        self.checkpoint(point)

    def observe(self, sink: EventSink, tracer: Tracer, guard: DoomLoopGuard) -> None:
        self.sink, self.tracer, self.guard = sink, tracer, guard

    def run(self, system_prompt: str, user_prompt: str, max_turns: int, *, resumed: bool = False) -> LoopResult:
        if resumed:
            # The stored conversation is the state: its system prompt and request stand as they were.
            self.tracer.line(f"resumed after {self.turn} turn(s): {len(self.messages)} messages")
        else:
            system = build_system_prompt(system_prompt, self.agent_tools, self.skills, self.tool_format)
            if system:
                self.messages.append({"role": "system", "content": system})
            self.messages.append({"role": "user", "content": user_prompt})
            self.tracer.setup([t.name for t in self.offered], system, user_prompt, self.tool_format)
            self.save(RUNNING)
        detail = ""
        for _ in range(max(0, max_turns - self.turn)):
            result = self.ask(final=False)
            items, native = self.extract(result)
            if not items:
                if is_tool_list_echo(self.answer_text(result), self.offered):
                    self.messages.append(assistant_text(result.content))
                    add_notice(self.messages, ECHO_NOTICE)
                    self.tracer.line("the reply only repeats the tool list: not taken as the answer")
                    continue
                self.messages.append(assistant_text(result.content))
                return self.finish(result, "done", "")
            self.tool_calls += len(items)
            # A call written as text while native tools are on goes into the history in native form.
            canonical = native or self.native_tools is not None
            if canonical and not native:
                items = with_ids(items, self.turn)
            if canonical:
                shown = result.content if native else strip_tool_calls(result.content, self.offered)
                self.messages.append(assistant_native(shown, items))
            else:
                self.messages.append(assistant_text(result.content))
            earlier = self.repeats.cached(items)
            if earlier is not None:
                outcomes = answer_repeats(items, earlier, turn=self.turn, emit=self.sink.emit, tracer=self.tracer)
                detail = self.repeats.repeated(items) or ""
            else:
                outcomes = dispatch(
                    items,
                    tools=self.tools,
                    executor=self.executor,
                    skills=self.skills,
                    turn=self.turn,
                    native=native,
                    emit=self.sink.emit,
                    tracer=self.tracer,
                    max_result_chars=self.max_result_chars,
                )
                self.repeats.ran(outcomes)
                self.remember(outcomes)
                detail = self.guard.observe(outcomes) or ""
            if canonical:
                self.messages.extend(native_results(outcomes))
            else:
                self.messages.append(text_results(outcomes))
            self.tool_log += [ToolRecord(self.turn, o.label, o.call_id, o.ok, len(o.text)) for o in outcomes]
            self.save(RUNNING)
            if detail:
                self.tracer.line(f"doom-loop guard: {detail}; asking for a final answer")
                if earlier is not None:
                    return self.close_plain("doom_loop", detail)
                break
        reason = "doom_loop" if detail else "max_turns"
        notice = f"Stop using tools: {detail}. Please provide your final answer now." if detail else MAX_TURNS_NOTICE
        add_notice(self.messages, notice)
        result = self.ask(final=True)
        self.report(result, 0, False)
        self.messages.append(assistant_text(result.content))
        detail = detail or f"reached max_turns={max_turns}"
        if not self.final_text(result) and self.results:
            # Still no answer: ask once more with the results as plain text and no tools.
            return self.close_plain(reason, detail)
        return self.finish(result, reason, detail)

    def close_plain(self, reason: str, detail: str) -> LoopResult:
        """The closing request for a model that did not take in its results (see plain_request)."""
        self.tracer.line("asking for the final answer with the tool results as plain text, no tools")
        # No system prompt either: an agent's ("first call read_note ...") would ask for a call again.
        request = plain_request(self._first("user"), list(self.results.values()), PLAIN_NOTICE)
        add_notice(self.messages, PLAIN_NOTICE)
        result = self.ask(final=True, messages=request)
        self.report(result, 0, False)
        self.messages.append(assistant_text(result.content))
        return self.finish(result, reason, detail)

    def remember(self, outcomes: Sequence[Outcome]) -> None:
        """The successful results so far, by call (the latest of a call wins), for close_plain."""
        for o in outcomes:
            if o.ok and isinstance(o.item, ParsedCall):
                label = f"{o.item.name} {json.dumps(o.item.args, ensure_ascii=False, default=str)}"
                self.results.pop(o.signature, None)
                self.results[o.signature] = (label, o.text)

    def _first(self, role: str) -> str:
        for message in self.messages:
            if message.get("role") == role and isinstance(message.get("content"), str):
                return message["content"]
        return ""

    # -- one chat request ---------------------------------------------------

    def ask(self, *, final: bool, messages: list[dict[str, Any]] | None = None) -> ChatResult:
        """One request: the conversation, or ``messages`` as given with no tools."""
        self.turn += 1
        sent = self.messages if messages is None else messages
        self.sink.emit(TurnStart(self.turn, len(sent), final))
        compactions = 0
        while True:
            tools = self.native_tools if messages is None else None
            extra = {"tool_choice": "none"} if final and tools else None
            try:
                result = self.client.complete(
                    sent, tools=tools, stream=self.stream, on_token=self.on_token, extra=extra
                )
                break
            except ContextOverflowError:
                if compactions >= MAX_COMPACTIONS or not compact(sent):
                    raise
                compactions += 1
                self.tracer.line("context window exceeded: old tool results elided, retrying")
            except PermanentBackendError as exc:
                if self.tool_format != "auto" or not tools or "tool" not in exc.detail.lower():
                    raise
                self.native_tools = None
                self.tracer.line("backend rejected native tools; continuing with the text format")
        self.usage = self.usage + result.usage
        return result

    def extract(self, result: ChatResult) -> tuple[list[CallItem], bool]:
        if result.tool_calls:
            items = [native_item(call, self.turn, i) for i, call in enumerate(result.tool_calls)]
            native = True
        else:
            items = parse_tool_calls(strip_thinking(result.content), self.offered)
            native = False
        self.report(result, len(items), native)
        return items, native

    def report(self, result: ChatResult, calls: int, native: bool) -> None:
        """The llm_response event and trace line of a request (closing requests too)."""
        status = "tool calls" if calls else (result.finish_reason or "stop")
        self.sink.emit(
            LlmResponse(
                self.turn,
                round(result.elapsed_s, 6),
                result.attempts,
                result.finish_reason,
                len(result.content),
                len(result.reasoning),
                calls,
                native,
                result.usage.to_dict() if result.usage else None,
            )
        )
        self.tracer.turn(self.turn, len(self.messages), status, result.elapsed_s, result.content, calls)

    def answer_text(self, result: ChatResult) -> str:
        return strip_tool_calls(strip_thinking(result.content), self.offered)

    def final_text(self, result: ChatResult) -> str:
        """The answer, or "" when there is none (empty, or only an echo of the tool list)."""
        text = self.answer_text(result)
        return "" if is_tool_list_echo(text, self.offered) else text

    def finish(self, result: ChatResult, reason: str, detail: str) -> LoopResult:
        text = self.final_text(result)
        self.sink.emit(Final(text, self.turn, reason, detail))
        u = self.usage
        self.sink.emit(UsageEvent(u.prompt_tokens, u.completion_tokens, u.total_tokens, self.turn))
        self.tracer.line(f"final after {self.turn} request(s) ({reason}): {len(text)} chars")
        if text.strip():
            self.save(FINISHED, final_text=text, stop_reason=reason)
        else:
            # No answer: the run fails (hugind.agentic_run), and the conversation stays resumable.
            self.save(FAILED, error=f"no final answer ({reason})")
        return LoopResult(text, self.turn, self.messages, u, reason, detail, self.tool_calls)


def native_item(call: NativeToolCall, turn: int, index: int) -> CallItem:
    call_id = call.id or f"call_{turn}_{index}"
    raw = json.dumps({"name": call.name, "arguments": call.arguments_json}, ensure_ascii=False)
    if not call.name:
        return ParseFailure(raw, "the tool call has no function name", None, call_id)
    args = args_from(call.arguments_json, raw, call.name)
    if isinstance(args, ParseFailure):
        return ParseFailure(args.raw, args.error, call.name, call_id)
    return ParsedCall(call.name, args, raw, call_id)
