"""An --audit file that cannot take the run's lines (a full disk: /dev/full).

The run still gives its result (the log's failure is not the agent's), but it
never passes in silence: a warning names the log and the count, and under
--strict the run fails with 74, since the log CI keeps is not the run's record.
"""

from __future__ import annotations

import json
import os

import pytest

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full to make writes fail")

MAIN = """
export default function main() {
  const text = fs.read_text("data/a.txt");
  return { text };
}
"""


@pytest.fixture
def agent(make_agent):
    return make_agent(
        {"main.js": MAIN, "data/a.txt": "alpha"},
        permissions={"filesystem": {"read": ["data"]}},
    )


def test_a_log_that_lost_lines_is_named_and_the_result_kept(cli, agent):
    res = cli("run", str(agent), "--audit", "/dev/full")
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout) == {"text": "alpha"}
    assert "hugind: warning: the audit log /dev/full is incomplete:" in res.stderr
    assert "failed" in res.stderr


def test_strict_fails_a_run_whose_log_lost_lines(cli, agent):
    res = cli("run", str(agent), "--strict", "--audit", "/dev/full")
    assert res.code == 74, res.stderr
    assert json.loads(res.stdout) == {"text": "alpha"}  # printed before the verdict
    assert "--strict: the audit log lost" in res.stderr


def test_a_whole_log_says_nothing(cli, agent, tmp_path):
    log = tmp_path / "audit.jsonl"
    res = cli("run", str(agent), "--strict", "--audit", str(log))
    assert res.code == 0, res.stderr
    assert "audit log" not in res.stderr
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["decision"] for e in lines] == ["allow"]
