"""The body of ``hugind run``, free of Typer: both the Typer command and the
quick path (``hugind/cli_quick.py``) call it with the same ``RunArgs``."""

from __future__ import annotations

import gc
import importlib
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from hugind import run_hints
from hugind.errors import ExitCode, HugindError, strict_failure


@dataclass
class RunArgs:
    """``hugind run``'s parameters, named as the Typer command names them."""

    agent: Path
    args: list[str] = field(default_factory=list)
    strict: bool = False
    policy: Path | None = None
    audit: Path | None = None
    fuel: int | None = None
    timeout: float | None = None
    backend: str | None = None
    model: str | None = None
    json_events: bool = False
    stream: bool = False
    expect: str | None = None
    record: Path | None = None
    learn: Path | None = None
    resume: str | None = None


# Set by the ``hugind`` executable (hugind.entry), whose process ends after one command.
FREEZE_IMPORTS = False


@contextmanager
def importing() -> Iterator[None]:
    """No garbage collection while a command imports its stack: the objects made
    are the modules' own, kept for the whole process, and collecting among them,
    again and again as they pile up, costs a cold run about a tenth of its time.
    In the executable they are then frozen, or the next collection would walk them
    all at once; an embedder calling a command keeps its own collector as it was."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if FREEZE_IMPORTS:
            gc.freeze()
        if enabled:
            gc.enable()


def import_run_stack() -> None:
    """Import what every ``hugind run`` loads, the host ops and the backend's
    resolution included, in one ``importing`` block rather than as the run goes."""
    with importing():
        for name in _RUN_STACK:
            importlib.import_module(name)


_RUN_STACK = (
    "hugind.manifest",
    "hugind.run",
    "hugind.llm.config",  # every run resolves its backend (hugind.backends.preview_backend)
    *(f"hugind.host.{ops}" for ops in ("fs", "llm", "mcp", "net", "shell")),  # hugind.run.capability_ops
)


def fail(err: HugindError) -> int:
    if not err.quiet:
        sys.stderr.write(f"hugind: error: {err.message}\n")
    return err.exit_code


def print_hints(lines: list[str] | None) -> None:
    """After the run's own output and error line: which agent.yaml key allows what was denied."""
    if lines:
        sys.stderr.write("\n".join(lines) + "\n")
        sys.stderr.flush()


def run_command(a: RunArgs) -> int:
    """Run an agent and print its result as JSON; the exit code."""
    with importing():
        from hugind.manifest import load_agent
        from hugind.run import RunOptions, run_agent, strict_verdict

    from hugind.denial_hints import DenialHints

    hints = DenialHints(strict=a.strict, preset=a.policy is not None)
    options = RunOptions(
        args=list(a.args),
        strict=a.strict,
        policy_file=a.policy,
        audit_path=a.audit,
        fuel=a.fuel,
        timeout=a.timeout,
        inherit_stdin=True,
        backend=a.backend,
        model=a.model or None,
        stream=a.stream,
        observers=[hints],
    )
    if a.json_events:
        from hugind.agentic import NdjsonSink
        from hugind.agentic_run import EventsTo

        options.observers.append(EventsTo(NdjsonSink(sys.stdout)))
        options.stdout = options.stderr  # the agent's prints must not corrupt the event stream
    recorder = None
    loaded = None
    try:
        loaded = load_agent(a.agent)
        if a.strict:
            from hugind.confine.gate import refuse_unconfinable

            refuse_unconfinable(loaded.manifest, a.policy is not None)
        if a.expect is not None:
            from hugind.pinning import verify

            loaded = verify(loaded, a.expect, str(a.agent))
        if a.record is not None:
            from hugind.replay.command import start_recording

            loaded, recorder = start_recording(a.record, a.agent, loaded, options)
            options.observers.append(recorder)
        if a.learn is not None:
            from hugind.learn.command import finish_learning, start_learning

            collector = start_learning(a.learn)
            options.observers.append(collector)
        if a.resume or loaded.manifest.mode == "agentic":  # an agentic run is saved after every turn
            from hugind.sessions.plan import run_saved

            result = run_saved(loaded, options, a.resume)
        else:
            result = run_agent(loaded, options)
        if a.learn is not None:
            finish_learning(collector, a.learn, loaded, options)
    except HugindError as err:
        from hugind import ctrl_c

        if ctrl_c.seen():  # the run stopped because of Ctrl-C (ctrl_c.py): ended as any Ctrl-C
            raise KeyboardInterrupt from None
        code = fail(err)
        verdict = strict_failure(err) if a.strict else None
        if verdict is not None:  # the run's own error is said first, then why it exits 3
            code = fail(verdict)
        print_hints(run_hints.denials(hints.lines, loaded))
        print_hints(run_hints.resume(getattr(err, "resume_hint", None), a.agent))
        if recorder is not None:
            from hugind.replay.command import end_recording

            end_recording(recorder, code, err)
        return code
    if result.has_result and not (a.json_events and result.loop is not None):
        try:
            sys.stdout.write(json.dumps(result.value, ensure_ascii=False) + "\n")
            sys.stdout.flush()
        except OSError as err:
            from hugind import std_streams

            std_streams.silence_stdout()  # what is still buffered must not fail again at exit
            return fail(std_streams.output_lost(err))
    verdict = strict_verdict(result) if a.strict else None
    if recorder is not None:
        from hugind.replay.command import end_recording

        end_recording(recorder, verdict.exit_code if verdict else ExitCode.OK, verdict, result)
    if verdict is not None:
        code = fail(verdict)
        print_hints(run_hints.denials(hints.lines, loaded))
        return code
    print_hints(run_hints.denials(hints.lines, loaded))
    return ExitCode.OK
