"""A Cancellation observer (hugind serve's): a run its caller no longer wants stops at its next turn with the host."""

from __future__ import annotations

import time

import pytest

from hugind.errors import ExitCode, RunCancelled
from hugind.manifest import load_agent
from hugind.mcp.serve import Cancellation
from hugind.run import RunOptions, run_agent


def _agent(tmp_path, source: str):
    script = tmp_path / "agent.js"
    script.write_text(source)
    return load_agent(script)


def test_a_run_waiting_on_the_host_stops_soon_after_it_is_cancelled(tmp_path):
    agent = _agent(tmp_path, "export default async () => { await new Promise((r) => setTimeout(r, 60000)); };")
    asked = time.monotonic() + 1.0
    options = RunOptions(stdout=lambda b: None, stderr=lambda b: None, host_env={})
    options.observers.append(Cancellation(lambda: time.monotonic() > asked))
    started = time.monotonic()
    with pytest.raises(RunCancelled, match="cancelled") as info:
        run_agent(agent, options)
    assert info.value.exit_code == ExitCode.CANCELLED == 130
    assert time.monotonic() - started < 5  # the 60 s wait and the run's own deadline never came


def test_a_run_never_cancelled_is_untouched(tmp_path):
    agent = _agent(tmp_path, "export default async () => { await new Promise((r) => setTimeout(r, 50)); return 7; };")
    options = RunOptions(
        stdout=lambda b: None, stderr=lambda b: None, host_env={}, observers=[Cancellation(lambda: False)]
    )
    assert run_agent(agent, options).value == 7
