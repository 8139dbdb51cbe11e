"""The quick path of ``hugind run`` (no Typer) gives the command exactly what Typer would,
and hands Typer every command line it is not certain of."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any, get_args

import pytest
import typer.main

import hugind.cli
from hugind.cli_quick import RUN_OPTIONS, parse_run
from hugind.run_command import RunArgs
from tests.conftest import REPO


def _run_command() -> Any:
    return typer.main.get_command(hugind.cli.app).commands["run"]


def _typer_args(argv: list[str], environ: dict[str, str], monkeypatch) -> RunArgs | str:
    """What Typer gives ``run`` for argv (as RunArgs), or the name of its usage error."""
    for name in ("HUGIND_BACKEND", "HUGIND_MODEL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    group = typer.main.get_command(hugind.cli.app)
    try:
        parent = group.make_context("hugind", ["run"], resilient_parsing=True)
        ctx = group.commands["run"].make_context("run", list(argv[1:]), parent=parent)
    except Exception as exc:
        return type(exc).__name__
    params = dict(ctx.params)
    params["args"] = list(params["args"] or [])
    return RunArgs(**params)


def test_the_quick_table_is_the_typer_command():
    typer_options = {}
    for param in _run_command().params:
        if param.param_type_name != "option":
            continue
        annotation = param.type_descriptor.annotation
        inner = [a for a in get_args(annotation) if a is not type(None)] or [annotation]
        kind = bool if param.is_flag else inner[0]
        typer_options[param.opts[0]] = (param.name, kind, param.envvar)
    quick = {name: (o.dest, o.kind, o.envvar) for name, o in RUN_OPTIONS.items()}
    assert quick == typer_options
    names = {p.name for p in _run_command().params}
    assert names == {f.name for f in fields(RunArgs)}


EVERYDAY = [
    ["run", "examples/hello", "--", "world"],
    ["run", "examples/hello"],
    ["run", "a", "x", "y"],
    ["run", "a", "x", "--strict", "y"],
    ["run", "a", "--fuel", "100", "--timeout", "2.5", "--backend", "b", "--expect", "sha256:00", "--", "x", "y"],
    ["run", "a", "--policy", "p.yaml", "--audit", "a.jsonl", "--strict", "--json", "--stream"],
    ["run", "a", "--record", "r.hgrec", "--learn", "l.yaml", "--model", "m"],
    ["run", "a", "--resume", "0123abcd"],
    ["run", "a", "--timeout=7", "--fuel=007"],
    ["run", str(REPO / "examples"), "--", "--goal", "x"],
    ["run", "a", "--", "--", "-x", "--strict"],
    ["run", "a", "-", "--", "-"],
]

HANDED_TO_TYPER = [
    ["run"],
    ["run", "--help"],
    ["run", "a", "--help"],
    ["run", "a", "-h"],
    ["run", "a", "--goal", "x"],
    ["run", "a", "--fuel"],
    ["run", "a", "--fuel", "lots"],
    ["run", "a", "--fuel", "1.5"],
    ["run", "a", "--fuel", " 12"],
    ["run", "a", "--fuel", "-3"],
    ["run", "a", "--timeout", "soon"],
    ["run", "a", "--timeout", "1e3"],
    ["run", "a", "--timeout", "5."],
    ["run", "a", "--strict=yes"],
    ["run", "a", "--strict", "--strict"],
    ["run", "a", "--fuel", "1", "--fuel", "2"],
    ["run", ""],
    ["run", "a", "--policy", ""],
    ["run", "a", "--policy="],
    ["check", "a"],
    ["version"],
    [],
]


@pytest.mark.parametrize("argv", EVERYDAY, ids=[" ".join(c) for c in EVERYDAY])
@pytest.mark.parametrize(
    "environ", [{}, {"HUGIND_BACKEND": "http://127.0.0.1:9/v1"}, {"HUGIND_BACKEND": "", "HUGIND_MODEL": " m "}]
)
def test_everyday_lines_parse_quickly_and_as_typer_does(monkeypatch, argv, environ):
    quick = parse_run(argv, environ)
    assert quick is not None
    assert quick == _typer_args(argv, environ, monkeypatch)


@pytest.mark.parametrize("argv", HANDED_TO_TYPER, ids=[" ".join(c) or "empty" for c in HANDED_TO_TYPER])
def test_anything_unsure_goes_to_typer(argv):
    assert parse_run(argv, {}) is None


_PROBE = """
import atexit, json, sys
from hugind.entry import main
sys.argv = ["hugind", *json.loads(sys.argv[1])]
def report():  # an exit handler: main() may end the process itself (hugind.process_end)
    sys.stderr.write("\\nPROBE " + json.dumps(sorted(m for m in ("typer", "click") if m in sys.modules)) + "\\n")
atexit.register(report)
main()
"""


def _probe(argv: list[str]) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(argv)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        env={**os.environ, "HUGIND_WARM": "0"},  # the probe watches this process: a cold run
    )
    marker = [line for line in proc.stderr.splitlines() if line.startswith("PROBE ")]
    assert marker, proc.stderr
    return proc, json.loads(marker[-1][len("PROBE ") :])


def test_a_quick_run_never_imports_typer_and_a_typer_one_does(tmp_path: Path):
    agent = tmp_path / "agent.js"
    agent.write_text("export default (input) => ({ got: input.args });")
    proc, loaded = _probe(["run", str(agent), "--timeout", "30", "--", "x"])
    assert json.loads(proc.stdout) == {"got": ["x"]}, proc.stderr
    assert loaded == []
    # The same run with an option only Typer reads: it answers, with its usage error.
    proc, loaded = _probe(["run", str(agent), "--goal", "x"])
    assert proc.returncode == 2
    assert "hugind run has no option --goal" in proc.stderr
    assert "typer" in loaded


def test_errors_and_exit_codes_are_the_same_both_ways(tmp_path: Path):
    agent = tmp_path / "agent.js"
    agent.write_text("throw new Error('boom');")
    quick, _ = _probe(["run", str(agent)])
    via_typer = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from hugind.cli import app; sys.argv=['hugind','run',sys.argv[1]]; app()",
            str(agent),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert quick.returncode == via_typer.returncode == 1
    assert quick.stderr.split("\nPROBE")[0].strip() == via_typer.stderr.strip()
    assert "hugind: error: Error: boom" in quick.stderr
