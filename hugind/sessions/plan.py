"""A run's session: a new one saved after every turn, or a saved one resumed.

``run_saved`` wraps a run of an agentic agent from above: it checks a
``--resume`` id (exists, same agent, not finished, not in use), takes the
session's lock for the whole run, restores the stored arguments, and hands
the run a ``SessionPlan``, a run observer (hugind/observer.py) that fixes the
backend's session id, continues the stored conversation and rewrites
``state.json`` atomically after every turn.

Resuming never widens what the run may do now: its turn budget is the one
the agent and its agent.yaml give today (never ``state.json``'s), and the
backend is the one ``--backend``, agent.yaml or the user's config names; the
session's stored ``--backend`` choice (and model) is used only when none of
them names one.

The agent's identity is its name, folder and code digest (``hugind.pinning``).
Another name, or another folder with other code, is another agent: refused.
Changed code in the same folder is allowed with a warning (fixing the tool
that crashed and resuming is the point); the session records the new digest.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from hugind.agentic.checkpoint import FINISHED, Checkpoint, ToolRecord
from hugind.errors import HugindError, UsageError
from hugind.llm.types import Usage
from hugind.manifest import Agent
from hugind.observer import LoopPlan, RunObserver
from hugind.run import RunOptions, RunResult, run_agent
from hugind.sessions.store import SessionStore, valid_id

if TYPE_CHECKING:
    from hugind.llm import BackendConfig


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class SessionPlan(RunObserver):
    agent: dict[str, Any]  # name, path, digest
    args: list[str]
    backend_choice: str | None  # the user's --backend, when it is safe to store
    model: str | None
    warn: Callable[[str], None]
    store: SessionStore | None = None  # known once the backend's session id is fixed
    resume_point: Checkpoint | None = None
    max_turns: int | None = None
    created: str = field(default_factory=now_iso)
    backend_label: str | None = None
    _broken: bool = False

    @property
    def id(self) -> str | None:
        return self.store.id if self.store else None

    def wrap_backend(self, backend: BackendConfig | None) -> BackendConfig | None:
        """Fix the run's session id (the stored one on resume) and hold the session."""
        if backend is None:
            return None
        if self.store is None:
            wanted = backend.session_id or uuid.uuid4().hex
            if not valid_id(wanted):
                self.warn(f"session id {wanted!r} cannot name a directory; this run is not saved")
                return backend
            store = SessionStore(wanted)
            try:
                store.acquire()
            except UsageError as err:  # in use (a fixed session_id shared by two runs), or no room on disk
                self.warn(f"{err.message}; this run is not saved")
                return backend
            self.store = store
        from hugind.backends import session_meta

        meta = session_meta(backend)
        self.backend_label = f"{meta['backend']} ({meta['base_url']})" if meta["backend"] else meta["base_url"]
        return backend.with_overrides(session_id=self.store.id)

    def wrap_loop(self, plan: LoopPlan) -> LoopPlan:
        """Announce the session; continue its conversation. The turn budget stays the run's own."""
        self.max_turns = plan.max_turns
        if self.store is not None and plan.events is not None:
            from hugind.agentic.events import SessionStart

            done = self.resume_point.turn if self.resume_point else 0
            plan.events.emit(SessionStart(self.store.id, self.resume_point is not None, done))
        return replace(plan, resume_from=self.resume_point)

    def on_turn(self, point: Checkpoint) -> None:
        """The loop's checkpoint: a failed write warns once and the run goes on."""
        if self.store is None or self._broken:
            return
        doc = {
            "id": self.store.id,
            "agent": self.agent,
            "status": point.status,
            "turns": point.turn,
            "max_turns": self.max_turns,
            "tool_calls": point.tool_calls,
            "args": self.args,
            "backend": self.backend_label,
            "backend_choice": self.backend_choice,
            "model": self.model,
            "created": self.created,
            "updated": now_iso(),
            "final": point.final_text,
            "stop_reason": point.stop_reason,
            "error": point.error,
            "usage": point.usage.to_dict(),
            "tools": [vars(t) for t in point.tools],
            "messages": point.messages,
        }
        try:
            self.store.save(doc)
        except (OSError, TypeError, ValueError) as exc:
            self._broken = True
            self.warn(f"cannot save session {self.store.id} ({exc}); the run goes on unsaved")

    def close(self) -> None:
        if self.store is not None:
            if not self.store.exists():
                self.store.remove()  # the run ended before its first checkpoint: nothing to keep
            self.store.release()


def run_saved(agent: Agent, options: RunOptions, resume: str | None = None) -> RunResult:
    """Run ``agent`` with its conversation saved after every turn (agentic agents), or
    continue the saved session ``resume``."""
    if agent.manifest.mode != "agentic":
        if resume:
            raise UsageError(f"--resume: agent {agent.manifest.name} is not agentic; only agentic runs are saved")
        return run_agent(agent, options)
    identity = agent_identity(agent)
    plan = resume_plan(agent, identity, options, resume) if resume else new_plan(identity, options)
    try:
        changed = replace(
            options,
            args=plan.args,
            backend=plan.backend_choice,
            model=plan.model,
            observers=[*options.observers, plan],
        )
        return run_agent(agent, changed)
    except HugindError as err:
        if plan.store is not None and plan.store.exists():
            hint = f"hugind: session {plan.id} is saved; continue it with: hugind run AGENT --resume {plan.id}"
            err.resume_hint = [hint]  # type: ignore[attr-defined]  # printed by the CLI after the error line
        raise
    finally:
        plan.close()


def agent_identity(agent: Agent) -> dict[str, Any]:
    from hugind.pinning import pin

    try:
        digest: str | None = pin(agent).digest
    except HugindError:
        digest = None  # the run fails on the same problem, with its usual message
    return {"name": agent.manifest.name, "path": str(agent.root), "digest": digest}


def new_plan(identity: dict[str, Any], options: RunOptions) -> SessionPlan:
    return SessionPlan(identity, list(options.args), _storable(options.backend), options.model, _warner(options))


def resume_plan(agent: Agent, identity: dict[str, Any], options: RunOptions, session_id: str) -> SessionPlan:
    if not valid_id(session_id):
        raise UsageError(f"no session {session_id!r} (list them with: hugind sessions)")
    if options.args:
        raise UsageError("--resume continues the saved conversation with its own arguments; pass none after --")
    store = SessionStore(session_id)
    doc = store.load()
    _check_owner(session_id, doc, identity, _warner(options))
    if doc.get("status") == FINISHED:
        raise UsageError(f"session {session_id} already finished ({doc.get('turns')} turns); nothing to resume")
    point = _checkpoint(doc, store)
    backend, model = _resumed_backend(agent, options, doc)
    store.acquire()
    return SessionPlan(
        identity,
        [str(a) for a in doc.get("args") or []],
        backend,
        model,
        _warner(options),
        store=store,
        resume_point=point,
        created=str(doc.get("created") or now_iso()),
    )


def _resumed_backend(agent: Agent, options: RunOptions, doc: dict[str, Any]) -> tuple[str | None, str | None]:
    """The backend and model of a resumed run: today's choice (--backend, agent.yaml, the
    user's config) over the stored one, which is used only when nothing names one now."""
    from hugind.backends import preview_backend

    if options.backend or agent.manifest.backend is not None or preview_backend(agent.manifest, None) is not None:
        return _storable(options.backend), options.model
    stored = doc.get("backend_choice")
    stored_model = doc.get("model")
    return (
        _storable(stored) if isinstance(stored, str) else None,
        options.model or (stored_model if isinstance(stored_model, str) else None),
    )


def _check_owner(session_id: str, doc: dict[str, Any], me: dict[str, Any], warn: Callable[[str], None]) -> None:
    owner = doc.get("agent") if isinstance(doc.get("agent"), dict) else {}
    if owner.get("name") != me["name"]:
        raise UsageError(f"session {session_id} belongs to agent {owner.get('name')!r}, not {me['name']!r}")
    same_place, same_code = owner.get("path") == me["path"], owner.get("digest") == me["digest"]
    if not same_place and not same_code:
        raise UsageError(
            f"session {session_id} belongs to another agent named {me['name']!r} (at {owner.get('path')}, "
            "with other code)"
        )
    if not same_code:
        warn(f"the agent's code changed since session {session_id} was saved; resuming with the new code")


def _checkpoint(doc: dict[str, Any], store: SessionStore) -> Checkpoint:
    messages, turns = doc.get("messages"), doc.get("turns")
    if not (isinstance(messages, list) and messages and all(isinstance(m, dict) for m in messages)):
        raise UsageError(f"{store.path} is damaged: no conversation to resume")
    if isinstance(turns, bool) or not isinstance(turns, int) or turns < 0:
        raise UsageError(f"{store.path} is damaged: bad turn count")
    tools = [ToolRecord(**t) for t in doc.get("tools") or [] if isinstance(t, dict) and set(t) == _TOOL_KEYS]
    return Checkpoint(
        messages,
        turns,
        int(doc.get("tool_calls") or 0),
        Usage.from_dict(doc.get("usage")) or Usage(),
        tools,
    )


_TOOL_KEYS = {"turn", "name", "call_id", "ok", "chars"}


def _storable(choice: str | None) -> str | None:
    """The user's --backend, unless it is a URL that carries a password or a query (a key)."""
    if not choice or "://" not in choice:
        return choice
    parts = urlsplit(choice)
    return None if (parts.username or parts.password or parts.query) else choice


def _warner(options: RunOptions) -> Callable[[str], None]:
    def warn(text: str) -> None:
        options.stderr(f"hugind: warning: {text}\n".encode())

    return warn
