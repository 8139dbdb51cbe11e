"""The ``hugind`` command line (Typer). Commands only: the work is in hugind.run.

No ``from __future__ import annotations`` here: Typer reads the commands'
annotations when it builds the CLI, and as strings it would evaluate them
anew on every start (twice per command).
"""

import gc
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from typer.core import TyperCommand, TyperGroup

from hugind import __version__
from hugind.cli_coerce import install
from hugind.errors import ExitCode, HugindError, UsageError

if TYPE_CHECKING:
    from hugind.mcp import McpHub


class _Group(TyperGroup):
    """``hugind``: its ``--help`` option is converted without pydantic (see cli_coerce)."""

    def get_params(self, ctx: Any) -> list[Any]:
        return install(super().get_params(ctx))


class _Command(TyperCommand):
    """Every hugind command: plain values are converted without pydantic (see cli_coerce)."""

    def get_params(self, ctx: Any) -> list[Any]:
        return install(super().get_params(ctx))


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


# Options several commands share: declared once so their names and help cannot drift.
PolicyOption = Annotated[Optional[Path], typer.Option("--policy", help="A preset that tightens the policy.")]
AuditOption = Annotated[Optional[Path], typer.Option("--audit", help="Append every policy decision (JSON lines).")]
TimeoutOption = Annotated[Optional[float], typer.Option("--timeout", help="Shorten the wall-clock limit (s).")]
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


@contextmanager
def _importing() -> Iterator[None]:
    """No garbage collection while a command imports its stack: the objects made
    are the modules' own, kept for the whole process, and collecting among them,
    again and again as they pile up, costs a cold run about a tenth of its time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _fail(err: HugindError) -> typer.Exit:
    sys.stderr.write(f"hugind: error: {err.message}\n")
    return typer.Exit(err.exit_code)


@app.command(cls=_RunCommand)
def run(
    agent: Annotated[Path, typer.Argument(help="Agent folder (with agent.yaml), or a single .js / .wasm file.")],
    args: Annotated[Optional[list[str]], typer.Argument(help="Arguments for the agent, after --.")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Deny by default; any denial fails the run.")] = False,
    policy: PolicyOption = None,
    audit: AuditOption = None,
    fuel: Annotated[Optional[int], typer.Option("--fuel", help="Meter the guest: trap after N fuel units.")] = None,
    timeout: TimeoutOption = None,
    backend: BackendOption = None,
    model: ModelOption = None,
    json_events: Annotated[bool, typer.Option("--json", help="Agentic mode: NDJSON events on stdout.")] = False,
    stream: Annotated[bool, typer.Option("--stream", help="Agentic mode: stream LLM responses.")] = False,
    expect: ExpectOption = None,
) -> None:
    """Run an agent and print its result as JSON."""
    with _importing():
        from hugind.manifest import load_agent
        from hugind.run import RunOptions, run_agent, strict_verdict

    options = RunOptions(
        args=list(args or []),
        strict=strict,
        policy_file=policy,
        audit_path=audit,
        fuel=fuel,
        timeout=timeout,
        inherit_stdin=True,
        backend=backend,
        model=model or None,
        stream=stream,
        explain_denials=True,
    )
    if json_events:
        from hugind.agentic import NdjsonSink

        options.events = NdjsonSink(sys.stdout)
        options.stdout = options.stderr  # the agent's prints must not corrupt the event stream
    try:
        loaded = load_agent(agent)
        if expect is not None:
            from hugind.pinning import verify

            loaded = verify(loaded, expect, str(agent))
        result = run_agent(loaded, options)
    except HugindError as err:
        stop = _fail(err)
        _print_hints(getattr(err, "denial_hints", None))
        raise stop from None
    if result.has_result and not (json_events and result.loop is not None):
        sys.stdout.write(json.dumps(result.value, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    verdict = strict_verdict(result) if strict else None
    if verdict is not None:
        stop = _fail(verdict)
        _print_hints(result.denial_hints)
        raise stop
    _print_hints(result.denial_hints)


def _print_hints(lines: Optional[list[str]]) -> None:
    """After the run's own output and error line: which agent.yaml key allows what was denied."""
    if lines:
        sys.stderr.write("\n".join(lines) + "\n")
        sys.stderr.flush()


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
        str, typer.Option("--template", "-t", help="js (script), agentic (LLM loop, one tool) or wasm-c (C, compiled).")
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
    max_parallel: Annotated[Optional[int], typer.Option("--max-parallel", help="Tasks at once.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    ray: RayOption = None,
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
        )
    except HugindError as err:
        raise _fail(err) from None
    raise typer.Exit(code)


@app.command(cls=_RayCommand)
def batch(
    agent: Annotated[Path, typer.Argument(help="Agent folder (with agent.yaml), or a single .js / .wasm file.")],
    inputs: Annotated[Path, typer.Argument(help='JSON lines, one run each: {"id", "args", "env"} (- for stdin).')],
    out: Annotated[Optional[Path], typer.Option("--out", help="Write the results here (default: stdout).")] = None,
    resume: Annotated[
        Optional[Path], typer.Option("--resume", help="Skip the items already in this results file; append the rest.")
    ] = None,
    concurrency: Annotated[
        Optional[int], typer.Option("--concurrency", "-j", help="Items at once (worker processes; default: CPUs).")
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Deny by default; any denial fails that item.")] = False,
    policy: PolicyOption = None,
    audit: AuditOption = None,
    timeout: TimeoutOption = None,
    fuel: Annotated[Optional[int], typer.Option("--fuel", help="Meter each item: trap after N fuel units.")] = None,
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
            require_ray()  # before anything runs or is written: without Ray, a one-line usage error
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


def main() -> None:
    code: int | str | None = 0
    try:
        try:
            app()
        except KeyboardInterrupt:
            sys.stderr.write("hugind: interrupted\n")
            sys.exit(130)
        except HugindError as err:  # raised outside a command's own handling
            sys.stderr.write(f"hugind: error: {err.message}\n")
            sys.exit(err.exit_code)
        except Exception:
            import traceback

            traceback.print_exc()
            sys.stderr.write("hugind: internal error (a bug in hugind; please report it with the trace above)\n")
            sys.exit(ExitCode.INTERNAL)
    except SystemExit as stop:
        code = stop.code
        raise
    finally:
        # The process ends next. Interpreter shutdown would run full garbage
        # collections over every object the imports made (wasmtime's bindings,
        # Typer, the policy), ~50 ms, longer than a script agent's whole run, to
        # free memory the OS takes back anyway. Frozen objects are left out of
        # those collections; atexit handlers, flushes and thread joins still run.
        gc.freeze()
        _leave_running_host_ops(code)


def _leave_running_host_ops(code: int | str | None) -> None:
    """End the process now if host ops a run left behind are still running.

    A fetch the agent aborted goes on in a daemon worker thread, possibly inside
    OpenSSL; the C library's exit handlers would then tear OpenSSL down under it
    (seen: SIGSEGV in libcrypto after the agent's last line). So: Python's exit
    handlers (cgroup sweep, audit files) and the flushes run, C's do not."""
    dispatch = sys.modules.get("hugind.host.dispatch")
    if dispatch is None or not dispatch.ops_in_progress():
        return
    import atexit
    import os

    if isinstance(code, str):
        sys.stderr.write(code + "\n")
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a closed pipe: nothing more can be said
            stream.flush()
    os._exit(code or 0)


if __name__ == "__main__":
    main()
