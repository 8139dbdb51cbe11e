"""Shared by the replay tests: the CLI in a subprocess, records read line by line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import CliResult, run_cli


def record_run(agent: Path, record: Path, *extra: str, stdin: str | None = None, env: dict | None = None) -> CliResult:
    return run_cli("run", str(agent), "--record", str(record), *extra, stdin=stdin, env=env)


def replay(record: Path, *extra: str, stdin: str | None = None, env: dict | None = None) -> CliResult:
    return run_cli("replay", str(record), *extra, stdin=stdin, env=env)


def lines(record: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in record.read_text().splitlines()]


def error_line(result: CliResult) -> str:
    """The one error line hugind printed (and there is exactly one)."""
    errors = [line for line in result.stderr.splitlines() if line.startswith("hugind: error:")]
    assert len(errors) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return errors[0]
