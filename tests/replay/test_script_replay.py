"""A script agent's clock, randomness and stdin come back byte for byte on replay."""

from __future__ import annotations

import json

from tests.replay.helpers import lines, record_run, replay

NONDETERMINISTIC = {
    "main.js": """
    export default async function main() {
      const line = input();
      const bytes = new Uint8Array(16);
      crypto.getRandomValues(bytes);
      await new Promise((r) => setTimeout(r, 5));
      console.log("now", Date.now(), performance.now());
      return {now: Date.now(), perf: performance.now(), random: [Math.random(), Math.random()],
              bytes: Array.from(bytes), uuid: crypto.randomUUID(), line};
    }
    """
}


def test_clock_random_and_stdin_replay_byte_identical(make_agent, tmp_path):
    agent = make_agent(NONDETERMINISTIC)
    record = tmp_path / "run.hgrec"
    first = record_run(agent, record, stdin="from stdin\n")
    assert first.code == 0, first.stderr
    value = json.loads(first.stdout.splitlines()[-1])
    assert value["line"] == "from stdin"
    # Another stdin, and time has passed: the replay still sees the recorded ones.
    again = replay(record, stdin="something else\n")
    assert again.code == 0, again.stderr
    assert again.stdout == first.stdout
    # A second, independent run differs (the values really are non-deterministic).
    other = record_run(agent, tmp_path / "other.hgrec", stdin="from stdin\n")
    assert json.loads(other.stdout.splitlines()[-1])["bytes"] != value["bytes"]
    kinds = {line.get("k") for line in lines(record)}
    assert {"header", "clock", "random", "read", "submit", "deliver", "call", "end"} <= kinds


def test_replay_ends_with_the_recorded_exit_code(make_agent, tmp_path):
    agent = make_agent({"main.js": "export default () => { throw new Error('boom ' + Math.random()); }"})
    record = tmp_path / "fail.hgrec"
    first = record_run(agent, record)
    assert first.code == 1
    again = replay(record)
    assert again.code == 1
    boom = [line for line in first.stderr.splitlines() if "boom" in line]
    assert boom and boom[0] in again.stderr


def test_a_record_is_never_overwritten(make_agent, tmp_path):
    agent = make_agent({"main.js": "export default () => 1"})
    record = tmp_path / "run.hgrec"
    record.write_text("precious\n")
    result = record_run(agent, record)
    assert result.code == 2
    assert "already exists" in result.stderr
    assert record.read_text() == "precious\n"
