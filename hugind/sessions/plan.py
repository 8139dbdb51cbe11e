"""A run's session: a new one saved after every turn, or a saved one resumed.

``run_with_session`` wraps a run of an agentic agent: it checks a ``--resume``
id (exists, same agent, not finished, not in use), takes the session's lock for
the whole run, restores the stored arguments, backend choice and model, and
hands the loop a checkpoint hook that rewrites ``state.json`` atomically.

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
from hugind.sessions.store import SessionStore, valid_id

if TYPE_CHECKING:
    from hugind.llm import BackendConfig
    from hugind.run import RunOptions, RunResult


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class SessionPlan:
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

    def attach(self, backend: BackendConfig | None) -> BackendConfig | None:
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

    def start(self, events: Any, max_turns: int) -> int:
        """The run's turn budget (a resumed run keeps its first one); announces the session."""
        if self.resume_point is not None and self.max_turns:
            max_turns = self.max_turns
        self.max_turns = max_turns
        if self.store is not None and events is not None:
            from hugind.agentic.events import SessionStart, as_sink

            done = self.resume_point.turn if self.resume_point else 0
            as_sink(events).emit(SessionStart(self.store.id, self.resume_point is not None, done))
        return max_turns

    def record(self, point: Checkpoint) -> None:
        """The loop's checkpoint hook: a failed write warns once and the run goes on."""
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


def run_with_session(agent: Agent, options: RunOptions, run: Callable[[Agent, RunOptions], RunResult]) -> RunResult:
    if agent.manifest.mode != "agentic":
        if options.resume:
            raise UsageError(f"--resume: agent {agent.manifest.name} is not agentic; only agentic runs are saved")
        return run(agent, replace(options, persist_session=False))
    identity = agent_identity(agent)
    plan = resume_plan(agent, identity, options) if options.resume else new_plan(identity, options)
    try:
        changed = replace(options, args=plan.args, backend=plan.backend_choice, model=plan.model, session_plan=plan)
        return run(agent, changed)
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


def resume_plan(agent: Agent, identity: dict[str, Any], options: RunOptions) -> SessionPlan:
    session_id = str(options.resume)
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
    store.acquire()
    plan = SessionPlan(
        identity,
        [str(a) for a in doc.get("args") or []],
        options.backend or doc.get("backend_choice"),
        options.model or doc.get("model"),
        _warner(options),
        store=store,
        resume_point=point,
        max_turns=doc.get("max_turns") if isinstance(doc.get("max_turns"), int) else None,
        created=str(doc.get("created") or now_iso()),
    )
    plan.backend_choice = _storable(plan.backend_choice)
    return plan


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
