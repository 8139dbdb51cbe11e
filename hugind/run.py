"""One run of one agent: manifest -> env -> policy -> sandbox -> (loop) -> result.

This is the public Python API behind ``hugind run``; tests and embedders
call ``run_agent`` directly. It imports no feature: record/replay, --learn,
saved sessions, --json events, batch's audit and serve's cancel reach the run
through ``RunOptions.observers`` (hugind/observer.py, called by run_hooks.py).
A saved session wraps a run from above (hugind.sessions.plan.run_saved).
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from hugind.backends import LlmService, choose_backend, preview_backend, session_meta
from hugind.confine.network import ChildNetwork
from hugind.errors import (
    AgentFailed,
    BackendError,
    EnvMissingError,
    HugindError,
    OutputFailed,
    PermissionDenied,
    StrictDenials,
)
from hugind.host.registry import Op
from hugind.manifest import Agent, EnvVar
from hugind.observer import LoopMcp, McpHubs, RunEnd, RunObserver, RunStart, TeamMember
from hugind.policy import AuditLog, PolicyEngine, build_policy, load_preset
from hugind.run_hooks import RunHooks
from hugind.sandbox.instance import GuestIO, GuestLimits
from hugind.sandbox.preopens import preopens_for
from hugind.sandbox.session import AgentSession, SessionConfig, base_ops

if TYPE_CHECKING:
    from hugind.agentic import LoopResult
    from hugind.agentic.events import EventSink

OutputSink = Callable[[bytes], None]


def _stdout(data: bytes) -> None:
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def _stderr(data: bytes) -> None:
    sys.stderr.buffer.write(data)
    sys.stderr.buffer.flush()


@dataclass
class RunOptions:
    """What the user chose for one run. Whatever watches or steers the run (a record or
    replay tape, --learn, a saved session, --json events, a cancel...) is an observer."""

    args: list[str] = field(default_factory=list)
    strict: bool = False
    policy_file: Path | None = None
    audit_path: Path | None = None
    fuel: int | None = None
    timeout: float | None = None  # can only shorten the manifest's limit
    stdout: OutputSink = _stdout
    stderr: OutputSink = _stderr
    inherit_stdin: bool = False
    stdin_path: Path | None = None
    host_env: Mapping[str, str] | None = None
    extra_ops: list[Op] = field(default_factory=list)  # an embedder's own host ops
    services: dict[str, Any] = field(default_factory=dict)  # their handlers' services, by name
    backend: str | None = None  # chosen by the user: trusted, unlike agent.yaml's
    model: str | None = None  # the user's --model: overrides the backend's model name
    trace: bool | TextIO | None = None  # agentic loop trace; None: follow HUGIND_TRACE
    stream: bool = False  # stream LLM responses in the agentic loop
    team: TeamMember | None = None  # run as a team member (team.* ops, input.team)
    observers: list[RunObserver] = field(default_factory=list)  # hugind/observer.py


@dataclass
class RunResult:
    has_result: bool
    value: Any
    denials: int
    elapsed_s: float
    loop: LoopResult | None = None  # agentic mode only
    audit_lost: int = 0  # lines the --audit file could not take (a full disk); see strict_verdict


def resolve_env(declared: tuple[EnvVar, ...], host_env: Mapping[str, str]) -> dict[str, str]:
    """Only declared names pass; every missing required name fails the run."""
    missing = [v.name for v in declared if v.required and v.name not in host_env]
    if missing:
        names = ", ".join(missing)
        raise EnvMissingError(f"required environment variable{'s' if len(missing) > 1 else ''} not set: {names}")
    return {v.name: host_env[v.name] for v in declared if v.name in host_env}


def make_policy(agent: Agent, options: RunOptions, hooks: RunHooks | None = None) -> PolicyEngine:
    preset = load_preset(options.policy_file) if options.policy_file else None
    policy = build_policy(
        agent.manifest.permissions,
        runtime_fs_mode=agent.manifest.runtime_fs_mode,
        agent_root=agent.root,
        strict=options.strict,
        preset=preset,
    )
    hooks = hooks if hooks is not None else RunHooks(options.observers, _warner(options))
    audit = hooks.wrap("wrap_audit", None, options.audit_path)
    if audit is None and options.audit_path:
        audit = AuditLog(options.audit_path)
    return PolicyEngine(policy, audit)


def capability_ops() -> list[Op]:
    from hugind.host import fs, llm, mcp, net, shell

    return [*fs.OPS, *shell.OPS, *net.OPS, *llm.OPS, *mcp.OPS]


@functools.cache
def _standard_ops() -> tuple[Op, ...]:
    """The ops of every run, gathered once (each module's OPS is a constant tuple)."""
    return (*base_ops(), *capability_ops())


def open_session(
    agent: Agent,
    options: RunOptions,
    engine: PolicyEngine,
    env: dict[str, str],
    services: dict[str, Any],
    hooks: RunHooks | None = None,
) -> AgentSession:
    hooks = hooks if hooks is not None else RunHooks(options.observers, _warner(options))
    limits = engine.policy.limits
    fuel = options.fuel if options.fuel is not None else limits.fuel
    timeout = limits.timeout if options.timeout is None else min(limits.timeout, options.timeout)
    io = GuestIO(
        stdout=options.stdout,
        stderr=options.stderr,
        inherit_stdin=options.inherit_stdin,
        stdin_path=options.stdin_path,
        argv=[agent.manifest.name, *options.args],
        env=env,
        preopens=preopens_for(engine, agent.root) if agent.runtime in ("wasm", "python") else [],
    )
    session_meta = getattr(services.get("llm"), "session", None)
    run_input: dict[str, Any] = {"args": list(options.args), "meta": {"session": session_meta, "env": env}}
    services = dict(services)
    team_ops: list[Op] = []
    if options.team is not None:
        from hugind.host import team

        team_ops = list(team.OPS)
        services["team"] = options.team
        run_input["team"] = options.team.describe()
    ops = _standard_ops()  # the same tuple every run: the dispatcher indexes it once
    if team_ops or options.extra_ops:
        ops = (*ops, *team_ops, *options.extra_ops)
    config = SessionConfig(
        agent=agent,
        policy=engine,
        limits=GuestLimits(
            memory_bytes=limits.memory_mb * 1024 * 1024, fuel=fuel, max_output_bytes=limits.max_output_bytes
        ),
        io=io,
        ops=ops,
        input=run_input,
        timeout_s=timeout,
        services=services,
        team=options.team is not None,
        tap=hooks.wrap("wrap_guest", None),
        cancelled=hooks.cancelled_check(),
        fresh_instance=options.strict,  # --strict: no instance another run used (recycle.py)
    )
    return AgentSession(config)


def run_agent(agent: Agent, options: RunOptions | None = None) -> RunResult:
    """manifest -> env -> policy -> backend -> session -> (loop); observers see each step."""
    options = options or RunOptions()
    hooks = RunHooks(options.observers, _warner(options))
    started = time.monotonic()
    host_env = os.environ if options.host_env is None else options.host_env
    env = resolve_env(agent.manifest.env, host_env)
    engine = make_policy(agent, options, hooks)
    engine.declared_env = dict(env)
    hooks.notify("on_policy", engine)
    backend = hooks.wrap("wrap_backend", preview_backend(agent.manifest, options.backend, options.model))
    events = hooks.event_sink()
    llm = LlmService(
        lambda: choose_backend(agent.manifest, options.backend, engine, backend, options.model),
        session=session_meta(backend),
        policy=engine,
        events=events,
        trace=options.trace,
    )
    child_network = ChildNetwork(engine)  # the children's filtering proxy, started on first use
    run = _Run(agent, options, hooks, engine, env, host_env, llm, child_network, events, started)
    try:
        has_result, value, loop = run.go()
    except HugindError as err:
        err.denials = engine.denials  # type: ignore[attr-defined]  # --strict: errors.strict_failure
        raise
    finally:
        # The log is closed by now, its last flush counted. A log that lost lines is no record
        # of the run: never let that pass in silence (an observer's audit may keep no file).
        lost = getattr(engine.audit, "write_errors", 0)
        if lost:
            plural = "s" if lost > 1 else ""
            path = getattr(engine.audit, "path", "")
            _warner(options)(f"the audit log {path} is incomplete: {lost} write{plural} failed")
    return RunResult(has_result, value, engine.denials, time.monotonic() - started, loop, lost)


@dataclass
class _Run:
    agent: Agent
    options: RunOptions
    hooks: RunHooks
    engine: PolicyEngine
    env: dict[str, str]
    host_env: Mapping[str, str]
    llm: LlmService
    child_network: ChildNetwork
    events: EventSink | None
    started: float

    def _open_mcp(self) -> McpHubs:
        """The MCP stack is loaded only for agents that declare servers."""
        if not self.agent.manifest.mcp:
            return McpHubs(None, None)
        from hugind.mcp import McpHub

        hub = McpHub.for_agent(
            self.agent,
            strict=self.options.strict,
            host_env=self.host_env,
            policy_file=self.options.policy_file,
            engine=self.engine,
        )
        hub.child_proxy = self.child_network
        return McpHubs(hub, hub)

    def _start(self) -> RunStart:
        o = self.options
        return RunStart(
            self.agent,
            self.engine,
            self.env,
            self.llm,
            list(o.args),
            o.strict,
            o.policy_file,
            o.timeout,
            o.fuel,
            o.stream,
        )

    def go(self) -> tuple[bool, Any, LoopResult | None]:
        """The run proper; closes everything it and run_agent opened (the audit log included)."""
        agent, options, hooks, llm = self.agent, self.options, self.hooks, self.llm
        hubs = McpHubs(None, None)
        loop = None
        try:
            hooks.notify("on_start", self._start())
            hubs = hooks.wrap("wrap_mcp", self._open_mcp)()
            # Per-run services on a copy: a RunOptions reused for another run must
            # not hand it this run's (soon closed) backend or MCP hub.
            services = {"llm": llm, "mcp": hubs.guest, "child_proxy": self.child_network, **options.services}
            session = open_session(agent, options, self.engine, self.env, services, hooks)
            llm.deadline = session.ctx.deadline
            try:
                try:
                    session.run_main()
                except AgentFailed as err:
                    from hugind.jscheck import reclassify

                    raise reclassify(agent, err) from None
                if agent.manifest.mode == "agentic":
                    loop = self._agentic(session, hubs.loop)
                    has_result, value = True, loop.final_text
                else:
                    has_result, value = session.result()
            finally:
                hooks.notify("on_session_closing", session)
                session.close()
        except BaseException as exc:
            hooks.notify("on_end", RunEnd(exc, time.monotonic() - self.started, self.engine))
            raise
        else:
            hooks.notify("on_end", RunEnd(None, time.monotonic() - self.started, self.engine))
        finally:
            if hubs.guest is not None:
                hubs.guest.close()
            llm.close()
            self.child_network.close()
            self.engine.close()
            self.engine.audit.close()
        return has_result, value, loop

    def _agentic(self, session: AgentSession, mcp: LoopMcp | None) -> LoopResult:
        from hugind.agentic_run import run_agentic

        llm = self.llm
        try:
            client = self.hooks.wrap("wrap_chat", llm.client)()
        except PermissionDenied as err:
            from hugind.errors import ExitCode

            if llm.failure is not None and llm.failure.exit_code == ExitCode.USAGE:
                raise llm.failure from None  # a wrong backend config (a fallback cycle ...) is the user's to fix
            raise BackendError(f"cannot use the agent's LLM backend: {err.message}") from None
        return run_agentic(
            session,
            client,
            mcp=mcp,
            args=self.options.args,
            manifest_turns=self.agent.manifest.max_turns,
            tool_format=self.agent.manifest.tool_format,
            events=self.events,
            trace=self.options.trace,
            stream=self.options.stream,
            hooks=self.hooks,
        )


def _warner(options: RunOptions) -> Callable[[str], None]:
    def warn(text: str) -> None:
        options.stderr(f"hugind: warning: {text}\n".encode())

    return warn


def strict_verdict(result: RunResult) -> HugindError | None:
    """Under --strict a run with any denial fails, even if the agent coped with it; and a run
    whose audit log lost lines (exit 74: what CI keeps as the run's record is not whole)."""
    if not result.denials:
        if result.audit_lost:
            return OutputFailed(f"--strict: the audit log lost {result.audit_lost} line(s) (a write failed)")
        return None
    plural = "s" if result.denials > 1 else ""
    return StrictDenials(f"--strict: the policy denied {result.denials} request{plural} during the run (see --audit)")
