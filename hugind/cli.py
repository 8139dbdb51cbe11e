"""The ``hugind`` command line (Typer). Commands only: the work is in hugind.run.

No ``from __future__ import annotations`` here: Typer reads the commands'
annotations when it builds the CLI, and as strings it would evaluate them
anew on every start (twice per command).
"""

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from typer.core import TyperCommand, TyperGroup

from hugind import __version__
from hugind.cli_coerce import install
from hugind.cli_help import readable
from hugind.errors import HugindError, UsageError
from hugind.run_command import fail
from hugind.run_command import importing as _importing

if TYPE_CHECKING:
    from hugind.mcp import McpHub


class _Group(TyperGroup):
    """``hugind``: its ``--help`` option is converted without pydantic (see cli_coerce)."""

    def get_params(self, ctx: Any) -> list[Any]:
        return readable(install(super().get_params(ctx)), ctx)


class _Command(TyperCommand):
    """Every hugind command: plain values are converted without pydantic (see cli_coerce)."""

    def get_params(self, ctx: Any) -> list[Any]:
        return readable(install(super().get_params(ctx)), ctx)


app = typer.Typer(
    cls=_Group,
    add_completion=False,
    pretty_exceptions_enable=False,
    no_args_is_help=True,
    help="Run untrusted LLM agents as WebAssembly modules under one permissions policy.",
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_print_version, help="Print hugind's version and exit."),
    ] = False,
) -> None:
    pass


def _bounded(option: str) -> Callable[[Any], Any]:
    """An option's callback: a number out of its range is a usage error naming the option."""
    from hugind.cli_numbers import problem

    def check(value: Any) -> Any:
        reason = problem(option, value)
        if reason is not None:  # one line, as every other usage error of hugind's own
            from hugind.errors import UsageError

            raise UsageError(f"Invalid value for '{option}': {reason}")
        return value

    return check


# Options several commands share: declared once so their names and help cannot drift.
PolicyOption = Annotated[Optional[Path], typer.Option("--policy", help="A preset that tightens the policy.")]
AuditOption = Annotated[Optional[Path], typer.Option("--audit", help="Append every policy decision (JSON lines).")]
TimeoutOption = Annotated[
    Optional[float], typer.Option("--timeout", callback=_bounded("--timeout"), help="Shorten the wall-clock limit (s).")
]
BackendOption = Annotated[
    Optional[str], typer.Option("--backend", envvar="HUGIND_BACKEND", help="LLM backend: a config name or URL.")
]
ModelOption = Annotated[
    Optional[str],
    typer.Option(
        "--model",
        envvar="HUGIND_MODEL",
        help="Model name sent to the LLM backend (overrides the backend's; a bare URL sends none without it).",
    ),
]
ExpectOption = Annotated[
    Optional[str], typer.Option("--expect", help="Refuse (exit 2) unless the agent's digest is this sha256:<hex>.")
]


class _RunCommand(_Command):
    """``hugind run``: an unknown option before ``--`` is most likely meant for the
    agent (``--goal``), so the error says where it goes, not only "No such option"."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        given = list(args)  # the parser consumes `args`
        try:
            return super().parse_args(ctx, args)
        except Exception as exc:
            # Typer may vendor click, so the class is matched by name; ctx.fail raises
            # the usage error of whichever click this is (exit 2).
            if type(exc).__name__ != "NoSuchOption" or not getattr(exc, "option_name", None):
                raise
            option = exc.option_name
            agent = next((a for a in given if not a.startswith("-")), "AGENT")
            ctx.fail(
                f"hugind run has no option {option}: arguments for the agent go after `--`, "
                f'as in: hugind run {agent} -- {option} "..."'
            )
            raise  # not reached: ctx.fail raises


def _fail(err: HugindError) -> typer.Exit:
    return typer.Exit(fail(err))


@app.command(cls=_RunCommand)
def run(
    agent: Annotated[Path, typer.Argument(help="Agent folder (with agent.yaml), or a single .js / .wasm file.")],
    args: Annotated[Optional[list[str]], typer.Argument(help="Arguments for the agent, after --.")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Deny by default; any denial fails the run.")] = False,
    policy: PolicyOption = None,
    audit: AuditOption = None,
    fuel: Annotated[
        Optional[int],
        typer.Option("--fuel", callback=_bounded("--fuel"), help="Meter the guest: trap after N fuel units."),
    ] = None,
    timeout: TimeoutOption = None,
    backend: BackendOption = None,
    model: ModelOption = None,
    json_events: Annotated[bool, typer.Option("--json", help="Agentic mode: NDJSON events on stdout.")] = False,
    stream: Annotated[bool, typer.Option("--stream", help="Agentic mode: stream LLM responses.")] = False,
    expect: ExpectOption = None,
    record: Annotated[
        Optional[Path], typer.Option("--record", help="Record the run to this new file, for `hugind replay`.")
    ] = None,
    learn: Annotated[
        Optional[Path], typer.Option("--learn", help="Write the tightest policy this run needed (a preset) here.")
    ] = None,
    resume: Annotated[
        Optional[str], typer.Option("--resume", help="Agentic mode: continue a saved session (see hugind sessions).")
    ] = None,
) -> None:
    """Run an agent and print its result as JSON."""
    from hugind.run_command import RunArgs, run_command

    code = run_command(
        RunArgs(
            agent=agent,
            args=list(args or []),
            strict=strict,
            policy=policy,
            audit=audit,
            fuel=fuel,
            timeout=timeout,
            backend=backend,
            model=model,
            json_events=json_events,
            stream=stream,
            expect=expect,
            record=record,
            learn=learn,
            resume=resume,
        )
    )
    if code:
        raise typer.Exit(code)


def _print_hints(lines: Optional[list[str]]) -> None:
    from hugind.run_command import print_hints

    print_hints(lines)


@app.command(cls=_Command)
def replay(
    record: Annotated[Path, typer.Argument(help="A record written by `hugind run --record`.")],
    agent: Annotated[Optional[Path], typer.Argument(help="The agent (default: the path in the record).")] = None,
    audit: AuditOption = None,
    strict: Annotated[bool, typer.Option("--strict", help="Replay under --strict (else as recorded).")] = False,
    policy: PolicyOption = None,
    allow_changed: Annotated[
        bool, typer.Option("--allow-changed", help="Replay a changed agent or policy up to the first divergent op.")
    ] = False,
    expect: Annotated[
        Optional[str], typer.Option("--expect", help="Refuse the record unless its file digest is this sha256:<hex>.")
    ] = None,
    json_events: Annotated[bool, typer.Option("--json", help="Agentic mode: NDJSON events on stdout.")] = False,
) -> None:
    """Re-run a recorded run offline: every host op, LLM answer, clock and random value from the record."""
    with _importing():
        from hugind.replay.command import replay as replay_record

    try:
        code = replay_record(
            record,
            agent,
            audit=audit,
            strict=strict,
            policy=policy,
            allow_changed=allow_changed,
            expect=expect,
            json_events=json_events,
        )
    except HugindError as err:
        raise _fail(err) from None
    if code:
        raise typer.Exit(code)


@app.command(cls=_Command)
def check(
    agent: Annotated[Path, typer.Argument(help="Agent folder, .js file or artifact.")],
    strict: Annotated[bool, typer.Option("--strict", help="Show the policy as --strict would apply it.")] = False,
    policy: PolicyOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the effective policy as JSON.")] = False,
    expect: ExpectOption = None,
) -> None:
    """Validate an agent's manifest, compile its JS, and print its effective policy."""
    from hugind.jscheck import JsCompileError
    from hugind.manifest import load_agent
    from hugind.mcp import McpHub
    from hugind.pinning import digest_for_check
    from hugind.run import RunOptions, make_policy

    try:
        loaded = load_agent(agent)
        digest = digest_for_check(loaded, expect, str(agent))  # compiles a JS agent's graph, once
        engine = make_policy(loaded, RunOptions(strict=strict, policy_file=policy))
        hub = McpHub.for_agent(loaded, strict=strict, host_env={}, policy_file=policy)
    except JsCompileError as problem:
        sys.stderr.write(problem.message + "\n")  # file:line:column: message, as compilers report
        raise typer.Exit(problem.exit_code) from None
    except HugindError as err:
        raise _fail(err) from None
    from hugind.confine.report import confinement_json, confinement_lines

    manifest = loaded.manifest
    mcp_lines = _describe_mcp(hub)
    if as_json:
        doc = {
            "agent": manifest.name,
            "mode": manifest.mode,
            "runtime": loaded.runtime,
            "entry_point": manifest.entry_point,
            "digest": digest,
            "env": [{"name": v.name, "required": v.required} for v in manifest.env],
            "policy": engine.to_json(),
            "mcp": {
                "servers": hub.declared,
                "allow": hub.policy.allow,
                "allowed_servers": list(hub.policy.servers) if hub.policy.servers is not None else None,
                "allowed_tools": list(hub.policy.tools) if hub.policy.tools is not None else None,
                "timeout": hub.policy.timeout,
            },
            "confinement": confinement_json(engine.policy),
        }
        typer.echo(json.dumps(doc, indent=2))
        return
    typer.echo(f"agent {manifest.name} ({manifest.mode}, {loaded.runtime}): {manifest.entry_point}")
    typer.echo(f"digest: {digest}")
    env = ", ".join(f"{v.name}{' (required)' if v.required else ''}" for v in manifest.env) or "none"
    typer.echo(f"env passed to the agent: {env}")
    for line in [*engine.describe(), *mcp_lines, *confinement_lines(engine.policy)]:
        typer.echo(line)


def _describe_mcp(hub: "McpHub") -> list[str]:
    if not hub.declared:
        return ["mcp: no servers declared"]
    servers = ", ".join(hub.declared)
    policy = hub.policy
    if not policy.allow:
        return [f"mcp: servers declared ({servers}) but none allowed (permissions.mcp.allow is not true)"]
    allowed = [d for d in hub.declared if policy.decide_server(d).allowed]
    lines = [f"mcp: servers {servers}; allowed: {', '.join(allowed) or 'none'}"]
    if policy.tools is not None:
        lines.append(f"  tools: only {', '.join(policy.tools)}")
    lines.append(f"  timeout {policy.timeout:g} s per call")
    return lines


@app.command(cls=_Command)
def build(
    agent: Annotated[Path, typer.Argument(help="JS agent folder or .js file.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="Where to write the artifact.")] = Path("agent.wasm"),
    standalone: Annotated[
        bool, typer.Option("--standalone", help="One self-contained WASI command (engine included), hugind not needed.")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("-v", "--verbose", help="Progress on stderr even when it is not a terminal.")
    ] = False,
) -> None:
    """Compile a JS agent and its imports to a bytecode .wasm artifact (runs in wasmtime)."""
    from hugind.build import build_artifact, describe, write_atomically
    from hugind.manifest import load_agent

    progress = _progress_printer(verbose)
    try:
        if standalone:
            from hugind.standalone import build_and_write

            progress("building a standalone module: the engine snapshotted with the agent loaded (a few seconds)")
            typer.echo(build_and_write(load_agent(agent), output))
            return
        data = build_artifact(load_agent(agent), progress)
        write_atomically(output, data)
    except HugindError as err:
        raise _fail(err) from None
    except OSError as exc:
        raise _fail(UsageError(f"cannot write {output}: {exc.strerror or exc}")) from None
    info = describe(data)
    typer.echo(f"wrote {output} ({info['bytes']} bytes; modules: {', '.join(sorted(info['modules']))})", err=True)
    typer.echo(info["digest"])  # alone on stdout, so a script can capture the pin


def _progress_printer(verbose: bool) -> Callable[[str], None]:
    """Progress lines for stderr: on a terminal, or with -v; never on stdout, whose
    digest line scripts capture."""
    if not (verbose or sys.stderr.isatty()):
        return lambda _line: None

    def say(line: str) -> None:
        sys.stderr.write(f"hugind: {line}\n")
        sys.stderr.flush()

    return say


@app.command(cls=_Command)
def init(
    directory: Annotated[Path, typer.Argument(help="Folder for the new agent (created; must be empty).")],
    template: Annotated[
        str,
        typer.Option(
            "--template", "-t", help="js (script), agentic (LLM loop, one tool), wasm-c (C), python, python-agentic."
        ),
    ] = "js",
    force: Annotated[
        bool, typer.Option("--force", help="Write into a non-empty folder; replaced files are listed.")
    ] = False,
) -> None:
    """Create a new agent folder from a template: agent.yaml (a tight, commented policy), code, README, test.sh."""
    from hugind.scaffold import next_steps, scaffold

    def progress(line: str) -> None:
        typer.echo(f"hugind: {line}", err=True)

    try:
        done = scaffold(directory, template, force=force, progress=progress)
    except HugindError as err:
        raise _fail(err) from None
    for line in next_steps(done, str(directory)):
        typer.echo(line)


@app.command(cls=_Command)
def serve(
    agents: Annotated[list[Path], typer.Argument(help="Agent folders, .js files or artifacts (tools).")],
    strict: Annotated[bool, typer.Option("--strict", help="Deny by default; a denial fails a call.")] = False,
    policy: PolicyOption = None,
    audit: AuditOption = None,
    timeout: TimeoutOption = None,
    backend: BackendOption = None,
    model: ModelOption = None,
) -> None:
    """Serve agents as the tools of an MCP server on stdio (eprint lines become progress notifications)."""
    from hugind.manifest import load_agent
    from hugind.mcp.serve import ServeOptions
    from hugind.mcp.serve import serve as serve_agents

    try:
        loaded = [load_agent(path) for path in agents]
        serve_agents(loaded, ServeOptions(strict, policy, audit, timeout, backend, model or None))
    except HugindError as err:
        raise _fail(err) from None


@app.command(cls=_Command)
def diff(
    old: Annotated[Path, typer.Argument(help="The old version: agent folder, artifact, agent.yaml or preset.")],
    new: Annotated[Path, typer.Argument(help="The new version, the same kinds.")],
    as_json: Annotated[bool, typer.Option("--json", help="A JSON list of {kind, detail, escalates}.")] = False,
) -> None:
    """Permission difference OLD -> NEW; exit 1 if NEW asks for more (escalates), 0 if not, 2 on bad input."""
    from hugind.permdiff import run_diff

    try:
        code, text = run_diff(old, new, as_json)
    except HugindError as err:
        raise _fail(err) from None
    typer.echo(text)
    raise typer.Exit(code)


@app.command(cls=_Command)
def version() -> None:
    """Print hugind's version."""
    typer.echo(__version__)


class _RayCommand(_Command):
    """``hugind team`` and ``batch``: ``--ray`` may come without an address (hugind.distributed.option)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        from hugind.distributed.option import fill_bare_ray

        return super().parse_args(ctx, fill_bare_ray(args))


RayOption = Annotated[
    Optional[str],
    typer.Option(
        "--ray",
        metavar="[ADDRESS]",
        help="Run on Ray: a cluster's host:port, 'auto' (one running here), or nothing (ray.init's choice).",
    ),
]


@app.command(cls=_RayCommand)
def team(
    workflow: Annotated[Path, typer.Argument(help="Workflow file (YAML): the team's agents and tasks.")],
    state_dir: Annotated[
        Optional[Path], typer.Option("--state-dir", help="Where results and shared memory are kept.")
    ] = None,
    backend: BackendOption = None,
    model: ModelOption = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue the run in --state-dir.")] = False,
    fresh: Annotated[bool, typer.Option("--fresh", help="Discard a previous run in --state-dir.")] = False,
    max_parallel: Annotated[
        Optional[int], typer.Option("--max-parallel", callback=_bounded("--max-parallel"), help="Tasks at once.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    ray: RayOption = None,
    audit: AuditOption = None,
) -> None:
    """Run a workflow: its tasks as a DAG, each in its agent's own sandbox; exit 1 if any task failed."""
    from hugind.team.command import run_team_command

    try:
        code = run_team_command(
            workflow,
            state_dir=state_dir,
            backend=backend,
            model=model or None,
            resume=resume,
            fresh=fresh,
            max_parallel=max_parallel,
            as_json=as_json,
            ray=ray,
            audit=audit,
        )
    except HugindError as err:
        raise _fail(err) from None
    raise typer.Exit(code)


@app.command(cls=_RayCommand)
def batch(
    agent: Annotated[Path, typer.Argument(help="Agent folder (with agent.yaml), or a single .js / .wasm file.")],
    inputs: Annotated[Path, typer.Argument(help='JSON lines, one run each: {"id", "args", "env"} (- for stdin).')],
    out: Annotated[
        Optional[Path], typer.Option("-o", "--out", help="Write the results here (default: stdout).")
    ] = None,
    resume: Annotated[
        Optional[Path], typer.Option("--resume", help="Skip the items already in this results file; append the rest.")
    ] = None,
    concurrency: Annotated[
        Optional[int],
        typer.Option(
            "--concurrency",
            "-j",
            callback=_bounded("--concurrency"),
            help="Items at once (worker processes; default: CPUs).",
        ),
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Deny by default; any denial fails that item.")] = False,
    policy: PolicyOption = None,
    audit: AuditOption = None,
    timeout: TimeoutOption = None,
    fuel: Annotated[
        Optional[int],
        typer.Option("--fuel", callback=_bounded("--fuel"), help="Meter each item: trap after N fuel units."),
    ] = None,
    backend: BackendOption = None,
    model: ModelOption = None,
    json_events: Annotated[bool, typer.Option("--json", help="NDJSON progress events on stderr.")] = False,
    ray: RayOption = None,
) -> None:
    """Run an agent once per input line, each in its own sandbox; results as JSON lines in input order."""
    from hugind.batch.command import BatchCommand, run_batch

    if ray is not None:
        from hugind.distributed.connect import require_ray

        try:
            require_ray(ray)  # before anything runs or is written: without Ray, a one-line usage error
        except HugindError as err:
            raise _fail(err) from None

    command = BatchCommand(
        agent,
        inputs,
        out,
        resume,
        concurrency,
        strict,
        policy,
        audit,
        timeout,
        fuel,
        backend,
        model or None,
        json_events,
        ray,
    )
    try:
        code = run_batch(command)
    except HugindError as err:
        raise _fail(err) from None
    raise typer.Exit(code)


@app.command(cls=_Command)
def sessions(
    as_json: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False,
    prune_days: Annotated[
        Optional[float],
        typer.Option("--prune", callback=_bounded("--prune"), help="Delete sessions not updated for this many days."),
    ] = None,
) -> None:
    """List saved agentic conversations (newest first); resume one with hugind run AGENT --resume ID."""
    from hugind.sessions.listing import list_sessions, prune, render

    try:
        if prune_days is not None:
            for gone in prune(prune_days):
                typer.echo(f"removed {gone}", err=True)
        typer.echo(render(list_sessions(), as_json))
    except HugindError as err:
        raise _fail(err) from None


@app.command(cls=_Command)
def warm(
    stop: Annotated[
        bool, typer.Option("--stop", help="Stop them: no new run is served; runs under way finish first.")
    ] = False,
    all_installs: Annotated[
        bool, typer.Option("--all", help="Every install's servers (other venvs, checkouts), not only this one's.")
    ] = False,
) -> None:
    """List this install's warm servers (the pre-imported processes later hugind runs are forked from)."""
    from hugind.warm import control

    found = control.servers(None if all_installs else control.this_install())
    if stop:
        for server in control.stop(found):
            typer.echo(f"stopping {server.pid} ({server.runs} runs under way)", err=True)
        return
    typer.echo(control.render(found, all_installs))
