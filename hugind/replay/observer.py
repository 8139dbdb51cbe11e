"""A tape at a run's seams: the one observer (hugind/observer.py) of ``--record`` and ``hugind replay``.

Recording, each seam is surrounded and what crosses it is written down;
replaying, each seam is answered from the record, and what the record
answers is never opened (no MCP server starts, no LLM client connects).
A failure of any hook fails the run: a record that cannot be written, or a
replay that diverged, must not look like a run that went well.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from hugind.errors import UsageError
from hugind.observer import ChatConnector, McpHubs, McpOpener, RunEnd, RunObserver, RunStart
from hugind.replay.audit import RecordingAudit, ReplayAudit
from hugind.replay.dispatch import taped_dispatcher
from hugind.replay.header import build_header, check_header
from hugind.replay.loop import RecordingChat, RecordingMcp, ReplayChat, ReplayMcp
from hugind.replay.tape import Player, Recorder
from hugind.replay.wasi import TapeWasi

if TYPE_CHECKING:
    from hugind.host.dispatch import Dispatcher
    from hugind.host.registry import HostContext, Op
    from hugind.manifest import Agent
    from hugind.policy import AuditLog, PolicyEngine
    from hugind.sandbox.interpose import GuestTap, GuestView, WasiTap


def _refuse_preopens(agent: Agent, engine: PolicyEngine, what: str) -> None:
    """A raw .wasm agent with WASI preopens reads files past every seam: refuse to record it."""
    if agent.runtime != "wasm":
        return
    from hugind.sandbox.preopens import preopens_for

    if preopens_for(engine, agent.root):
        raise UsageError(
            f"{what}: this raw .wasm agent reads its filesystem roots through WASI preopens, which a record "
            "cannot capture; run it without --record (JS agents and .wasm agents without filesystem roots record)"
        )


class Taping(RunObserver):
    """Puts ``tape`` (a Recorder or a Player) at every seam of one run."""

    def __init__(self, tape: Recorder | Player) -> None:
        self.tape = tape
        self._agent: Agent | None = None

    # ---- run hooks --------------------------------------------------------------------

    def wrap_audit(self, audit: AuditLog | None, path: Path | None) -> AuditLog | None:
        # The record keeps (or replays) every audit entry, in its own order.
        if isinstance(self.tape, Player):
            replayed = ReplayAudit(path)
            self.tape.on_audit = replayed.replay_line
            return replayed
        return RecordingAudit(path, self.tape)

    def on_start(self, start: RunStart) -> None:
        self._agent = start.agent
        tape = self.tape
        if isinstance(tape, Player):
            _refuse_preopens(start.agent, start.engine, "hugind replay")
            tape.warnings = check_header(tape.record.header, tape.code, start.engine, tape.allow_changed)
            audit = start.engine.audit
            if isinstance(audit, ReplayAudit):
                audit.engine = start.engine
            session = tape.record.header.get("session")
            if isinstance(session, dict):
                start.llm.session = session  # the guest sees the recorded run's session id
            return
        _refuse_preopens(start.agent, start.engine, "--record")
        header = build_header(start, tape.agent_path, tape.code)
        tape.writer.append(header, sync=True)

    def wrap_mcp(self, opener: McpOpener) -> McpOpener:
        # The loop's own MCP calls are taped here; the guest's cross the dispatcher,
        # which tapes them as host ops: the guest keeps the bare hub.
        tape = self.tape
        if isinstance(tape, Player):
            declared = bool(self._agent is not None and self._agent.manifest.mcp)
            return lambda: McpHubs(None, ReplayMcp(tape, True) if declared else None)

        def recording() -> McpHubs:
            hubs = opener()
            return McpHubs(hubs.guest, None if hubs.loop is None else RecordingMcp(hubs.loop, tape))

        return recording

    def wrap_guest(self, tap: GuestTap | None) -> GuestTap | None:
        return self

    def wrap_chat(self, connect: ChatConnector) -> ChatConnector:
        tape = self.tape
        if isinstance(tape, Player):
            return lambda: ReplayChat(tape)  # never connect(): no client, no socket
        return lambda: RecordingChat(connect(), tape)

    def on_end(self, end: RunEnd) -> None:
        if isinstance(self.tape, Player):
            self.tape.ended(end.error)

    # ---- the guest's seams (hugind.sandbox.interpose.GuestTap) ---------------------------

    def dispatcher(self, ctx: HostContext, ops: Iterable[Op]) -> Dispatcher:
        return taped_dispatcher(ctx, ops, self.tape)

    def wasi(self, guest: GuestView) -> WasiTap:
        return TapeWasi(guest, self.tape)
