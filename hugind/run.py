"""One run of one agent: manifest -> env -> policy -> sandbox -> (loop) -> result.

This is the public Python API behind ``hugind run``; tests and embedders
call ``run_agent`` directly.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hugind.backends import LlmService, choose_backend, preview_backend, session_meta
from hugind.confine.network import ChildNetwork
from hugind.errors import AgentFailed, BackendError, EnvMissingError, HugindError, PermissionDenied, StrictDenials
from hugind.host.registry import Op
from hugind.manifest import Agent, EnvVar
from hugind.policy import AuditLog, PolicyEngine, build_policy, load_preset
from hugind.sandbox.instance import GuestIO, GuestLimits
from hugind.sandbox.preopens import preopens_for
from hugind.sandbox.session import AgentSession, SessionConfig, base_ops

if TYPE_CHECKING:
    from hugind.agentic import LoopResult

OutputSink = Callable[[bytes], None]


def _stdout(data: bytes) -> None:
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def _stderr(data: bytes) -> None:
    sys.stderr.buffer.write(data)
    sys.stderr.buffer.flush()


@dataclass
class RunOptions:
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
    extra_ops: list[Op] = field(default_factory=list)
    services: dict[str, Any] = field(default_factory=dict)
    backend: str | None = None  # chosen by the user: trusted, unlike agent.yaml's
    model: str | None = None  # the user's --model: overrides the backend's model name
    events: Any = None  # agentic loop event sink (NDJSON for --json)
    trace: Any = None  # None: follow HUGIND_TRACE
    stream: bool = False  # stream LLM responses in the agentic loop
    team: Any = None  # hugind.team.TeamContext: run as a team member (team.* ops, input.team)
    explain_denials: bool = False  # after a denial, say which agent.yaml key allows it (RunResult.denial_hints)
    tape: Any = None  # hugind.replay.tape.Recorder (--record) or Player (hugind replay)
    audit_log: AuditLog | None = None  # record into this log instead (batch: per item, kept in memory)
    learn: Any = None  # hugind.learn.UsageCollector: collect every allowed decision (hugind run --learn)
    persist_session: bool = False  # agentic: save the conversation after every turn (hugind.sessions)
    resume: str | None = None  # agentic: continue this saved session (implies persist_session)
    session_plan: Any = None  # set by hugind.sessions.plan for the run it wraps
    # True once whoever asked for the run no longer wants it (hugind serve: the client
    # cancelled the call); the run stops at its next turn with the host (RunCancelled).
    cancelled: Callable[[], bool] | None = None


@dataclass
class RunResult:
    has_result: bool
    value: Any
    denials: int
    elapsed_s: float
    loop: LoopResult | None = None  # agentic mode only
    # With explain_denials: lines for the user's stderr (hugind.denial_hints). A run that
    # raises a HugindError carries them as the error's ``denial_hints`` attribute.
    denial_hints: list[str] = field(default_factory=list)


def resolve_env(declared: tuple[EnvVar, ...], host_env: Mapping[str, str]) -> dict[str, str]:
    """Only declared names pass; every missing required name fails the run."""
    missing = [v.name for v in declared if v.required and v.name not in host_env]
    if missing:
        names = ", ".join(missing)
        raise EnvMissingError(f"required environment variable{'s' if len(missing) > 1 else ''} not set: {names}")
    return {v.name: host_env[v.name] for v in declared if v.name in host_env}


def make_policy(agent: Agent, options: RunOptions) -> PolicyEngine:
    preset = load_preset(options.policy_file) if options.policy_file else None
    policy = build_policy(
        agent.manifest.permissions,
        runtime_fs_mode=agent.manifest.runtime_fs_mode,
        agent_root=agent.root,
        strict=options.strict,
        preset=preset,
    )
    if options.tape is not None:  # the record keeps (or replays) every audit entry
        audit = options.tape.audit_log(options.audit_path)
    else:
        audit = options.audit_log
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
    agent: Agent, options: RunOptions, engine: PolicyEngine, env: dict[str, str], services: dict[str, Any]
) -> AgentSession:
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
        preopens=preopens_for(engine, agent.root) if agent.runtime == "wasm" else [],
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
        tape=options.tape,
        cancelled=options.cancelled,
        fresh_instance=options.strict,  # --strict: no instance another run used (recycle.py)
    )
    return AgentSession(config)


def run_agent(agent: Agent, options: RunOptions | None = None) -> RunResult:
    options = options or RunOptions()
    saving = options.resume or (options.persist_session and agent.manifest.mode == "agentic")
    if saving and options.session_plan is None:
        from hugind.sessions.plan import run_with_session

        return run_with_session(agent, options, run_agent)
    started = time.monotonic()
    host_env = os.environ if options.host_env is None else options.host_env
    env = resolve_env(agent.manifest.env, host_env)
    engine = make_policy(agent, options)
    engine.declared_env = dict(env)
    if options.learn is not None:
        options.learn.attach(engine)
    backend = preview_backend(agent.manifest, options.backend, options.model)
    if options.session_plan is not None:
        backend = options.session_plan.attach(backend)  # the session's id becomes X-Session-ID
    llm = LlmService(
        lambda: choose_backend(agent.manifest, options.backend, engine, backend, options.model),
        session=session_meta(backend),
        policy=engine,
        events=options.events,
        trace=options.trace,
    )
    if options.tape is not None:
        options.tape.start(agent, engine, env, options, llm)
    child_network = ChildNetwork(engine)  # the children's filtering proxy, started on first use
    try:
        has_result, value, loop = _run_in(agent, options, engine, env, host_env, llm, child_network)
    except HugindError as err:
        err.denial_hints = _denial_hints(engine, options)  # type: ignore[attr-defined]  # printed by the CLI
        err.denials = engine.denials  # type: ignore[attr-defined]  # --strict: errors.strict_failure
        raise
    elapsed = time.monotonic() - started
    if options.learn is not None:
        options.learn.finish(elapsed)
    return RunResult(has_result, value, engine.denials, elapsed, loop, _denial_hints(engine, options))


def _run_in(
    agent: Agent,
    options: RunOptions,
    engine: PolicyEngine,
    env: dict[str, str],
    host_env: Mapping[str, str],
    llm: LlmService,
    child_network: ChildNetwork,
) -> tuple[bool, Any, LoopResult | None]:
    """The run proper; closes everything it and run_agent opened (the audit log included)."""
    mcp_hub = None
    loop = None
    try:
        replaying = options.tape is not None and options.tape.replaying
        if agent.manifest.mcp and not replaying:  # the MCP stack is loaded only for agents that declare servers
            from hugind.mcp import McpHub

            mcp_hub = McpHub.for_agent(
                agent, strict=options.strict, host_env=host_env, policy_file=options.policy_file, engine=engine
            )
            mcp_hub.child_proxy = child_network
        # The loop's own MCP calls are taped here; the guest's cross the dispatcher,
        # which tapes them as host ops: the guest keeps the bare hub.
        loop_mcp = mcp_hub if options.tape is None else options.tape.mcp(mcp_hub, agent)
        # Per-run services on a copy: a RunOptions reused for another run must
        # not hand it this run's (soon closed) backend or MCP hub.
        services = {"llm": llm, "mcp": mcp_hub, "child_proxy": child_network, **options.services}
        session = open_session(agent, options, engine, env, services)
        llm.deadline = session.ctx.deadline
        try:
            try:
                session.run_main()
            except AgentFailed as err:
                from hugind.jscheck import reclassify

                raise reclassify(agent, err) from None
            if agent.manifest.mode == "agentic":
                loop = _agentic(session, agent, options, llm, loop_mcp)
                has_result, value = True, loop.final_text
            else:
                has_result, value = session.result()
        finally:
            if options.learn is not None:
                options.learn.note_session(session)
            session.close()
    except BaseException as exc:
        if options.tape is not None:
            options.tape.ended(exc)
        raise
    else:
        if options.tape is not None:
            options.tape.ended(None)
    finally:
        if mcp_hub is not None:
            mcp_hub.close()
        llm.close()
        child_network.close()
        engine.close()
        engine.audit.close()
    return has_result, value, loop


def _denial_hints(engine: PolicyEngine, options: RunOptions) -> list[str]:
    if not (options.explain_denials and engine.denials):
        return []
    from hugind.denial_hints import denial_summary

    return denial_summary(
        engine.audit.entries, total=engine.denials, strict=options.strict, preset=options.policy_file is not None
    )


def _agentic(session: AgentSession, agent: Agent, options: RunOptions, llm: LlmService, mcp: Any) -> LoopResult:
    from hugind.agentic_run import run_agentic

    try:
        client = llm.client() if options.tape is None else options.tape.chat(llm.client)
    except PermissionDenied as err:
        from hugind.errors import ExitCode

        if llm.failure is not None and llm.failure.exit_code == ExitCode.USAGE:
            raise llm.failure from None  # a wrong backend config (a fallback cycle ...) is the user's to fix
        raise BackendError(f"cannot use the agent's LLM backend: {err.message}") from None
    return run_agentic(
        session,
        client,
        mcp=mcp,
        args=options.args,
        manifest_turns=agent.manifest.max_turns,
        tool_format=agent.manifest.tool_format,
        events=options.events,
        trace=options.trace,
        stream=options.stream,
        saved=options.session_plan,
    )


def strict_verdict(result: RunResult) -> StrictDenials | None:
    """Under --strict a run with any denial fails, even if the agent coped with it."""
    if not result.denials:
        return None
    plural = "s" if result.denials > 1 else ""
    return StrictDenials(f"--strict: the policy denied {result.denials} request{plural} during the run (see --audit)")
