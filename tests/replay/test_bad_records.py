"""Records that cannot be trusted or that belong to another agent or policy: one line, a documented code."""

from __future__ import annotations

import json

import pytest

from hugind.errors import ExitCode
from tests.replay.helpers import error_line, record_run, replay

AGENT = {
    "main.js": """
    export default () => ({text: fs.read_text("notes.txt"), when: Date.now()});
    """,
    "notes.txt": "hello notes",
}
MANIFEST = {
    "name": "reader",
    "entry_point": "main.js",
    "runtime_fs_mode": "read-only",
    "permissions": {"filesystem": {"read": ["notes.txt"]}},
}


@pytest.fixture
def recorded(make_agent, tmp_path):
    agent = make_agent(AGENT, manifest=MANIFEST)
    record = tmp_path / "run.hgrec"
    result = record_run(agent, record)
    assert result.code == 0, result.stderr
    return agent, record


def test_truncated_mid_line(recorded):
    _, record = recorded
    data = record.read_bytes()
    record.write_bytes(data[: len(data) - 20])
    result = replay(record)
    assert result.code == ExitCode.RECORD_INVALID
    assert "truncated" in error_line(result)


def test_cut_at_a_line_boundary_is_an_incomplete_record(recorded):
    _, record = recorded
    kept = record.read_text().splitlines()[:4]
    record.write_text("\n".join(kept) + "\n")
    result = replay(record)
    assert result.code == ExitCode.RECORD_INVALID
    assert "incomplete" in error_line(result)
    assert "no closing line" in result.stderr


def test_tampered_line_breaks_the_chain(recorded):
    _, record = recorded
    text = record.read_text()
    assert "hello notes" in text
    record.write_text(text.replace("hello notes", "jello notes", 1))
    result = replay(record)
    assert result.code == ExitCode.RECORD_INVALID
    assert "hash chain broken" in error_line(result)


def test_not_a_record(tmp_path):
    bogus = tmp_path / "bogus.hgrec"
    bogus.write_text(json.dumps({"hello": 1}) + "\n")
    result = replay(bogus)
    assert result.code == ExitCode.RECORD_INVALID
    assert "not a hugind record" in error_line(result)


def test_record_of_another_agent(recorded, make_agent):
    _, record = recorded
    other = make_agent({"main.js": "export default () => 2"}, manifest={**MANIFEST, "name": "other"})
    result = replay(record, str(other))
    assert result.code == ExitCode.REPLAY_DIVERGED
    assert "agent's code differs" in error_line(result)


def test_strict_differs(recorded):
    _, record = recorded
    result = replay(record, "--strict")
    assert result.code == ExitCode.REPLAY_DIVERGED
    assert "effective policy differs" in error_line(result)


def test_policy_preset_differs(recorded, tmp_path):
    _, record = recorded
    preset = tmp_path / "tight.yaml"
    preset.write_text("permissions:\n  limits:\n    timeout: 7\n")
    result = replay(record, "--policy", str(preset))
    assert result.code == ExitCode.REPLAY_DIVERGED
    assert "effective policy differs" in error_line(result)


def test_file_digest_pin(recorded):
    _, record = recorded
    ok = replay(record, "--expect", "sha256:" + "0" * 64)
    assert ok.code == ExitCode.RECORD_INVALID
    assert "does not match --expect" in error_line(ok)
