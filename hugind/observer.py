"""The one interface through which a feature watches or steers a run.

``hugind.run.run_agent`` knows no feature. Record/replay, ``--learn``, saved
sessions, batch's per-item audit, denial hints, ``--json`` events and serve's
cancellation each hand the run a ``RunObserver`` (``RunOptions.observers``)
and implement the few hooks they need; the rest keep the protocol's defaults.

Two kinds of hooks, as in httpx (event hooks beside transports):

- notify hooks (``on_*``) are told something and return None;
- wrap hooks (``wrap_*``) take a part of the run (the audit log, the backend,
  the guest's seams, the MCP hubs, the chat client, the loop's plan) and
  return one of the same type: themselves, or one that surrounds them.

``is_cancelled`` is polled: the run stops when any observer says so.

Order. The hooks run in this order in a run (agentic-only ones marked *):
wrap_audit, on_policy, wrap_backend, on_start, wrap_mcp, wrap_guest,
wrap_chat*, wrap_loop*, then on_turn* / on_event* / is_cancelled while it
runs, on_session_closing, on_end. Observers are called in the order they
were registered; a wrap hook wraps what the observers before it returned, so
the last registered is the outermost.

Failure. A hook that raises fails the run (a tape that cannot be written, or
a replay that diverged, must not let the run look fine), with one exception:
``on_event``, whose failure is reported once on the run's stderr and ends
that observer's events, never the run (a listener with a bug is no reason
to stop an agent). An ``OSError`` from ``on_event`` still ends the run: the
stream the events are written to is gone (``--json`` to a reader that left
ends quietly with 141, as the agent's own output to it does).

Registration is checked (``hugind.run_hooks.RunHooks``): an observer method
named ``on_*``, ``wrap_*`` or ``is_*`` that is no hook here is an error, as
is a hook taking other arguments than the protocol's.

This module imports only types.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from hugind.agentic.checkpoint import Checkpoint
    from hugind.agentic.events import EventSink, LoopEvent
    from hugind.backends import LlmService
    from hugind.llm import BackendConfig, ChatClient
    from hugind.manifest import Agent
    from hugind.mcp.hub import McpHub
    from hugind.policy import AuditLog, PolicyEngine
    from hugind.sandbox.interpose import GuestTap
    from hugind.sandbox.session import AgentSession


class LoopMcp(Protocol):
    """What the agentic loop calls on an MCP hub (McpHub, or a tape's stand-in)."""

    specs: Mapping[str, object] | bool  # falsy: no server to offer tools from

    def offered_tools(self, engine: PolicyEngine, deadline: float) -> list[dict[str, Any]]: ...

    def call_tool(self, engine: PolicyEngine, name: str, arguments: dict[str, Any], deadline: float) -> Any: ...


class McpHubs(NamedTuple):
    """The run's MCP hubs: the guest's (its calls are taped as host ops, and the run
    closes it) and the agentic loop's own (the same hub, or one a tape surrounds)."""

    guest: McpHub | None
    loop: LoopMcp | None


McpOpener = Callable[[], McpHubs]
ChatConnector = Callable[[], "ChatClient"]


@dataclass(frozen=True)
class RunStart:
    """What a run is about to do, once its policy and backend are known."""

    agent: Agent
    engine: PolicyEngine
    env: dict[str, str]  # the declared environment the guest gets
    llm: LlmService
    args: list[str]
    strict: bool
    policy_file: Path | None
    timeout: float | None
    fuel: int | None
    stream: bool


@dataclass(frozen=True)
class LoopPlan:
    """The agentic loop's start: its turn budget, the conversation it continues, its events."""

    max_turns: int
    resume_from: Checkpoint | None
    events: EventSink | None


@dataclass(frozen=True)
class RunEnd:
    error: BaseException | None  # None: the run ended normally
    elapsed_s: float
    engine: PolicyEngine


class TeamMember(Protocol):
    """A run that is one member of a team (hugind.team.TeamContext)."""

    def describe(self) -> dict[str, Any]: ...


class RunObserver(Protocol):
    """Subclass it and override the hooks you need; the defaults do nothing."""

    # ---- wrap hooks: take a part of the run, return one of the same type ---------

    def wrap_audit(self, audit: AuditLog | None, path: Path | None) -> AuditLog | None:
        """The log the policy engine writes to (None: ``path``'s, or none)."""
        return audit

    def wrap_backend(self, backend: BackendConfig | None) -> BackendConfig | None:
        return backend

    def wrap_mcp(self, opener: McpOpener) -> McpOpener:
        return opener

    def wrap_guest(self, tap: GuestTap | None) -> GuestTap | None:
        """The guest's host calls and WASI clock/random/stdin (hugind.sandbox.interpose)."""
        return tap

    def wrap_chat(self, connect: ChatConnector) -> ChatConnector:
        return connect

    def wrap_loop(self, plan: LoopPlan) -> LoopPlan:
        return plan

    # ---- notify hooks ------------------------------------------------------------------

    def on_policy(self, engine: PolicyEngine) -> None:
        return None

    def on_start(self, start: RunStart) -> None:
        return None

    def on_turn(self, point: Checkpoint) -> None:
        """The agentic loop's conversation, at its start and after every turn."""
        return None

    def on_event(self, event: LoopEvent) -> None:
        return None

    def on_session_closing(self, session: AgentSession) -> None:
        return None

    def on_end(self, end: RunEnd) -> None:
        return None

    # ---- polled -------------------------------------------------------------------------

    def is_cancelled(self) -> bool:
        """True once whoever asked for the run no longer wants it (it stops at its next host call)."""
        return False


WRAP_HOOKS = ("wrap_audit", "wrap_backend", "wrap_mcp", "wrap_guest", "wrap_chat", "wrap_loop")
NOTIFY_HOOKS = ("on_policy", "on_start", "on_turn", "on_event", "on_session_closing", "on_end")
POLL_HOOKS = ("is_cancelled",)
HOOKS = (*WRAP_HOOKS, *NOTIFY_HOOKS, *POLL_HOOKS)
HOOK_PREFIXES = ("wrap_", "on_", "is_")
