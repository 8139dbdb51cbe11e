"""What a newcomer reads (issue 28): help text as a command line shows it, batch's -o,
replay's line numbers from 1, the hints after a failed run."""

from __future__ import annotations

import json
import re

import pytest

from hugind.errors import ExitCode
from tests.conftest import run_cli

# Typer 0.29's own spellings, none of which a user types.
TYPER_SPELLINGS = re.compile(r"\{[a-z_]+\}|<(bool|path|int|float|str|list\[str\])>")


@pytest.mark.parametrize("command", [[], ["run"], ["batch"], ["build"], ["check"], ["warm"], ["sessions"]])
def test_help_reads_as_a_command_line(command):
    res = run_cli(*command, "--help", env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert res.code == 0, res.stderr
    assert not TYPER_SPELLINGS.search(res.stdout), res.stdout


def test_run_help_names_the_argument_and_the_values():
    text = run_cli("run", "--help", env={"COLUMNS": "200", "NO_COLOR": "1"}).stdout
    assert re.search(r"Usage: .* run \[OPTIONS\] AGENT \[ARGS\.\.\.\]", text), text
    assert re.search(r"--timeout\s+NUMBER\s", text) and re.search(r"--fuel\s+INTEGER\s", text)
    assert re.search(r"--strict\s+Deny by default", text)  # a flag takes no value: none is shown
    missing = run_cli("run")
    assert missing.code == ExitCode.USAGE and "Missing argument 'AGENT'" in missing.stderr


def test_root_help_shows_version_as_a_flag():
    text = run_cli("--help", env={"COLUMNS": "200", "NO_COLOR": "1"}).stdout
    assert re.search(r"--version\s+Print hugind's version", text), text


def test_batch_takes_o_for_out(tmp_path):
    agent = tmp_path / "echo.js"
    agent.write_text("export default (input) => input.args;\n")
    out = tmp_path / "results.jsonl"
    res = run_cli("batch", str(agent), "-", "-o", str(out), "-j", "1", stdin='{"id": "a", "args": ["x"]}\n')
    assert res.code == 0, res.stderr
    (line,) = out.read_text().splitlines()
    assert json.loads(line)["id"] == "a"


def test_replay_counts_lines_from_1(tmp_path):
    agent = tmp_path / "one.js"
    agent.write_text("export default () => Math.random() < 2;\n")
    record = tmp_path / "run.hgrec"
    assert run_cli("run", str(agent), "--record", str(record)).code == 0
    lines = record.read_text().splitlines(keepends=True)
    assert len(lines) >= 3
    lines[1] = "not json\n"  # the file's second line, as an editor numbers it
    record.write_text("".join(lines))
    res = run_cli("replay", str(record))
    assert res.code == ExitCode.RECORD_INVALID
    assert f"{record}: line 2 is not valid JSON" in res.stderr, res.stderr


def test_an_agentic_agent_without_a_backend_is_told_about_backend(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    assert run_cli("init", "--template", "agentic", str(tmp_path / "ag")).code == 0
    res = run_cli("run", str(tmp_path / "ag"), "--", "hi", env={"HUGIND_HOME": str(home), "HUGIND_BACKEND": ""})
    assert res.code == ExitCode.USAGE
    assert "no LLM backend given: pass --backend URL" in res.stderr, res.stderr
