"""The ``hugind`` command line (Typer). Commands only: the work is in hugind.run."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from hugind import __version__
from hugind.errors import ExitCode, HugindError

app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    no_args_is_help=True,
    help="Run untrusted LLM agents as WebAssembly modules under one permissions policy.",
)


def _fail(err: HugindError) -> typer.Exit:
    sys.stderr.write(f"hugind: error: {err.message}\n")
    return typer.Exit(err.exit_code)


@app.command()
def run(
    agent: Annotated[Path, typer.Argument(help="Agent folder (with agent.yaml), or a single .js / .wasm file.")],
    args: Annotated[Optional[list[str]], typer.Argument(help="Arguments for the agent, after --.")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Deny by default; any denial fails the run.")] = False,
    policy: Annotated[Optional[Path], typer.Option("--policy", help="A preset that tightens the policy.")] = None,
    audit: Annotated[Optional[Path], typer.Option("--audit", help="Append every policy decision (JSON lines).")] = None,
    fuel: Annotated[Optional[int], typer.Option("--fuel", help="Meter the guest: trap after N fuel units.")] = None,
    timeout: Annotated[Optional[float], typer.Option("--timeout", help="Shorten the wall-clock limit (s).")] = None,
) -> None:
    """Run an agent and print its result as JSON."""
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
    )
    try:
        result = run_agent(load_agent(agent), options)
    except HugindError as err:
        raise _fail(err) from None
    if result.has_result:
        sys.stdout.write(json.dumps(result.value, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    verdict = strict_verdict(result) if strict else None
    if verdict is not None:
        raise _fail(verdict)


@app.command()
def build(
    agent: Annotated[Path, typer.Argument(help="JS agent folder or .js file.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="Where to write the artifact.")] = Path("agent.wasm"),
) -> None:
    """Compile a JS agent and its imports to a bytecode .wasm artifact (runs in wasmtime)."""
    from hugind.build import build_artifact, describe, write_atomically
    from hugind.manifest import load_agent

    try:
        data = build_artifact(load_agent(agent))
    except HugindError as err:
        raise _fail(err) from None
    write_atomically(output, data)
    info = describe(data)
    typer.echo(f"wrote {output} ({info['bytes']} bytes; modules: {', '.join(sorted(info['modules']))})", err=True)


@app.command()
def version() -> None:
    """Print hugind's version."""
    typer.echo(__version__)


def main() -> None:
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


if __name__ == "__main__":
    main()
