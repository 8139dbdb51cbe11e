"""Resource limits stop runaway raw wasm agents, each with its own message and exit code."""

from __future__ import annotations

import time

import pytest

from hugind.errors import AgentFailed, ExitCode, LimitExceeded, TrapError
from tests.runtime.helpers import run_captured

DEADLINE = "run stopped: wall-clock deadline exceeded (permissions.limits.timeout)"


def test_infinite_loop_hits_the_deadline(guest_agent):
    started = time.monotonic()
    with pytest.raises(LimitExceeded) as err:
        run_captured(guest_agent("limits"), "loop", timeout=1)
    assert err.value.message == DEADLINE
    assert err.value.exit_code == ExitCode.LIMIT_EXCEEDED == 4
    assert time.monotonic() - started < 5


def test_infinite_loop_cli_timeout(guest_agent, cli):
    run = cli("run", str(guest_agent("limits")), "--timeout", "1", "--", "loop")
    assert run.code == 4
    assert run.stderr.strip() == f"hugind: error: {DEADLINE}"


def test_manifest_timeout_applies_too(guest_agent):
    agent = guest_agent("limits", permissions={"limits": {"timeout": 0.5}})
    with pytest.raises(LimitExceeded, match="wall-clock deadline exceeded"):
        run_captured(agent, "loop")


def test_fuel_exhaustion(guest_agent, cli):
    run = cli("run", str(guest_agent("limits")), "--fuel", "100000", "--", "loop")
    assert run.code == 4
    assert run.stderr.strip() == ("hugind: error: run stopped: fuel exhausted (100000 units, permissions.limits.fuel)")


def test_deep_recursion_is_a_stack_overflow_trap(guest_agent, cli):
    with pytest.raises(TrapError) as err:
        run_captured(guest_agent("limits"), "recurse")
    assert err.value.message == "wasm trap: stack overflow (recursion too deep)"
    assert err.value.exit_code == ExitCode.TRAP == 5
    run = cli("run", str(guest_agent("limits")), "--", "recurse")
    assert (run.code, run.stderr.strip()) == (
        5,
        "hugind: error: wasm trap: stack overflow (recursion too deep)",
    )


@pytest.mark.parametrize("memory_mb", [32, 64])
def test_unbounded_malloc_stops_at_the_memory_cap(guest_agent, memory_mb):
    agent = guest_agent("limits", permissions={"limits": {"memory_mb": memory_mb}})
    started = time.monotonic()
    with pytest.raises(AgentFailed) as err:
        run_captured(agent, "malloc")
    assert time.monotonic() - started < 10
    assert err.value.name == "OutOfMemory"
    assert err.value.js_message.startswith("malloc returned NULL after ")
    got_mib = int(err.value.js_message.split()[-2])
    assert 0 < got_mib < memory_mb
    assert err.value.exit_code == ExitCode.AGENT_FAILED


def test_memory_growth_ignoring_failure_traps_out_of_bounds(guest_agent):
    agent = guest_agent("limits", permissions={"limits": {"memory_mb": 48}})
    started = time.monotonic()
    with pytest.raises(TrapError) as err:
        run_captured(agent, "grow")
    assert time.monotonic() - started < 10
    assert err.value.message == "wasm trap: out-of-bounds memory access"
    assert err.value.exit_code == 5


def test_abort_is_a_trap(guest_agent):
    with pytest.raises(TrapError) as err:
        run_captured(guest_agent("limits"), "abort")
    assert err.value.message == "wasm trap: unreachable instruction executed (the module aborted)"
    assert err.value.exit_code == 5


def test_endless_output_hits_the_output_cap(guest_agent):
    agent = guest_agent("limits", permissions={"limits": {"max_output_bytes": 100_000}})
    with pytest.raises(LimitExceeded) as err:
        run_captured(agent, "spew")
    assert err.value.message == "run stopped: output cap of 100000 bytes exceeded"
    assert err.value.exit_code == 4
