"""The host-side agentic loop: prompts, skills, tool-call parsing, dispatch."""

from hugind.agentic.ask import AskRequest, ask_llm, ask_llm_stream, build_ask_request
from hugind.agentic.calls import CallItem, ParsedCall, ParseFailure
from hugind.agentic.checkpoint import Checkpoint
from hugind.agentic.events import (
    BackendRefused,
    BackendSwitch,
    ErrorEvent,
    EventSink,
    Final,
    ListSink,
    LlmResponse,
    LoopEvent,
    NdjsonSink,
    SessionStart,
    ToolEnd,
    ToolStart,
    TurnStart,
    UsageEvent,
)
from hugind.agentic.executor import FunctionExecutor
from hugind.agentic.history import MAX_TURNS_NOTICE
from hugind.agentic.loop import ChatBackend, LoopResult, run_agentic_loop
from hugind.agentic.parse import parse_tool_calls, strip_tool_calls
from hugind.agentic.prompt import build_system_prompt, tools_prompt
from hugind.agentic.skills import Skill, SkillSet, UnknownSkillError
from hugind.agentic.thinking import split_thinking, strip_thinking
from hugind.agentic.tools import ToolExecutor, ToolResult, ToolSpec

__all__ = [
    "MAX_TURNS_NOTICE",
    "AskRequest",
    "BackendRefused",
    "BackendSwitch",
    "CallItem",
    "ChatBackend",
    "Checkpoint",
    "ErrorEvent",
    "EventSink",
    "Final",
    "FunctionExecutor",
    "ListSink",
    "LlmResponse",
    "LoopEvent",
    "LoopResult",
    "NdjsonSink",
    "ParseFailure",
    "ParsedCall",
    "SessionStart",
    "Skill",
    "SkillSet",
    "ToolEnd",
    "ToolExecutor",
    "ToolResult",
    "ToolSpec",
    "ToolStart",
    "TurnStart",
    "UnknownSkillError",
    "UsageEvent",
    "ask_llm",
    "ask_llm_stream",
    "build_ask_request",
    "build_system_prompt",
    "parse_tool_calls",
    "run_agentic_loop",
    "split_thinking",
    "strip_thinking",
    "strip_tool_calls",
    "tools_prompt",
]
