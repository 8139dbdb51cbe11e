"""The two commands: ``hugind run --record FILE`` (start/end) and ``hugind replay FILE [AGENT]``."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hugind.denial_hints import DenialHints
from hugind.errors import (
    ExitCode,
    HugindError,
    RecordInvalid,
    ReplayDiverged,
    StrictDenials,
    UsageError,
    strict_failure,
)
from hugind.manifest import Agent
from hugind.replay.observer import Taping
from hugind.replay.reader import Record
from hugind.replay.scrub import Scrubber
from hugind.replay.tape import Player, Recorder
from hugind.replay.writer import RecordWriter
from hugind.run import RunOptions


def _declared_env(agent: Any, host_env: Mapping[str, str]) -> dict[str, str]:
    return {v.name: host_env[v.name] for v in agent.manifest.env if v.name in host_env}


def _pinned(agent: Any) -> tuple[Any, str]:
    """The agent sealed to the content its digest covers (what runs is what the record names)."""
    from hugind.pinning import pin

    pinned = pin(agent)
    return pinned.agent, pinned.digest


def start_recording(path: Path, agent_arg: Path, agent: Agent, options: RunOptions) -> tuple[Agent, Taping]:
    """Seal the agent and open the record (never over an existing file); the run's observer."""
    sealed, code = _pinned(agent)
    host_env = os.environ if options.host_env is None else options.host_env
    writer = RecordWriter(path, Scrubber(_declared_env(agent, host_env)))
    return sealed, Taping(Recorder(writer, code, str(agent_arg.resolve())))


def end_recording(taping: Taping, exit_code: int, error: HugindError | None = None, result: Any = None) -> None:
    tape = taping.tape
    if not isinstance(tape, Recorder):
        return
    if result is not None:
        tape.outcome = {"has_result": result.has_result, "result": result.value if result.has_result else None}
    digest = tape.finish(exit_code, error.message if error is not None else None)
    sys.stderr.write(f"hugind: record written to {tape.writer.path} ({tape.writer.count} lines, {digest})\n")


def replay(
    record_path: Path,
    agent_arg: Path | None,
    *,
    audit: Path | None,
    strict: bool,
    policy: Path | None,
    allow_changed: bool,
    expect: str | None,
    json_events: bool,
) -> int:
    """Replay a record; returns the exit code (the recorded run's, unless something differs)."""
    from hugind.manifest import load_agent
    from hugind.replay.reader import read_record
    from hugind.run import run_agent, strict_verdict

    record = read_record(record_path)
    if expect is not None:
        from hugind.digest import parse_expected

        if record.digest != parse_expected(expect):
            raise RecordInvalid(f"{record_path}: digest {record.digest} does not match --expect {expect}")
    header = record.header
    agent_path = agent_arg if agent_arg is not None else Path(str(header.get("agent", "")))
    loaded = load_agent(agent_path)
    sealed, code = _pinned(loaded)
    player = Player(record, Scrubber(_declared_env(loaded, os.environ)), code, allow_changed)
    hints = DenialHints(strict=strict or bool(header.get("strict")), preset=False)
    options = RunOptions(
        args=[str(a) for a in header.get("args", [])],
        strict=strict or bool(header.get("strict")),
        policy_file=policy if policy is not None else _recorded_preset(record, vouched=expect is not None),
        audit_path=audit,
        fuel=header.get("fuel"),
        timeout=header.get("timeout"),
        inherit_stdin=False,  # stdin comes from the record
        stream=bool(header.get("stream")),
        observers=[hints, Taping(player)],
    )
    hints.preset = options.policy_file is not None
    if json_events:
        from hugind.agentic import NdjsonSink
        from hugind.agentic_run import EventsTo

        options.observers.append(EventsTo(NdjsonSink(sys.stdout)))
        options.stdout = options.stderr
    if not record.complete:
        sys.stderr.write(
            "hugind: note: the record has no closing line (the recorded run did not finish); "
            "replaying up to where it ends\n"
        )
    try:
        result = run_agent(sealed, options)
    except (ReplayDiverged, RecordInvalid):
        raise
    except HugindError as err:
        for warning in player.warnings:
            sys.stderr.write(f"hugind: warning: {warning}\n")
        sys.stderr.write(f"hugind: error: {err.message}\n")
        verdict = strict_failure(err) if options.strict else None
        if verdict is not None:
            sys.stderr.write(f"hugind: error: {verdict.message}\n")
        _hints(hints.lines)
        return _same_end(record, verdict.exit_code if verdict is not None else err.exit_code)
    for warning in player.warnings:
        sys.stderr.write(f"hugind: warning: {warning}\n")
    if result.has_result and not (json_events and result.loop is not None):
        sys.stdout.write(json.dumps(result.value, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    end = record.end
    if end is not None and end.get("has_result") is not None:
        recorded = player.scrub.restore(json.dumps(end.get("result"), ensure_ascii=False, sort_keys=True))
        if bool(end.get("has_result")) != result.has_result or (
            result.has_result and json.dumps(result.value, ensure_ascii=False, sort_keys=True) != recorded
        ):
            raise ReplayDiverged("replay diverged at the end: the run's result differs from the record's")
    verdict: StrictDenials | None = strict_verdict(result) if options.strict else None
    if verdict is not None:
        sys.stderr.write(f"hugind: error: {verdict.message}\n")
    _hints(hints.lines)
    return _same_end(record, verdict.exit_code if verdict is not None else ExitCode.OK)


def _recorded_preset(record: Record, *, vouched: bool) -> Path | None:
    """The ``--policy`` file the record names, as a path to read only once the user vouched
    for the record (``--expect`` matched its digest): anyone can write a record whose hash
    chain holds, and its header must not make hugind read a file of its choosing."""
    named = record.header.get("policy_file")
    if not named:
        return None
    if not vouched:
        raise UsageError(
            f"{record.path} was recorded with --policy {named!r}: give the policy file with --policy to "
            "replay it (a record's paths are not read unless --expect vouches for the record)"
        )
    return Path(str(named))


def _same_end(record: Any, code: int) -> int:
    """The replay's exit code; a recorded run that ended otherwise has diverged."""
    if record.end is not None and record.end.get("exit") != code:
        raise ReplayDiverged(
            f"replay diverged at the end: the run exits {code}, the record's run exited {record.end.get('exit')}"
        )
    return code


def _hints(lines: list[str] | None) -> None:
    if lines:
        sys.stderr.write("\n".join(lines) + "\n")
        sys.stderr.flush()
