"""Resource limits on JS agents: each ends in bounded time with a clear message."""

from __future__ import annotations

import time

import pytest

from hugind.errors import AgentFailed, ExitCode, LimitExceeded
from tests.runtime.helpers import run_captured


def _limits(**limits):
    return {"permissions": {"limits": limits}}


def test_infinite_loop_hits_the_wall_clock_deadline(make_agent):
    agent = make_agent({"main.js": "export default () => { for (;;) {} }"}, **_limits(timeout=1))
    started = time.monotonic()
    with pytest.raises(LimitExceeded, match="wall-clock deadline") as info:
        run_captured(agent)
    assert info.value.exit_code == ExitCode.LIMIT_EXCEEDED
    assert time.monotonic() - started < 10


def test_cli_timeout_can_only_shorten_the_manifest_limit(make_agent):
    agent = make_agent({"main.js": "export default () => { for (;;) {} }"}, **_limits(timeout=1))
    started = time.monotonic()
    with pytest.raises(LimitExceeded):
        run_captured(agent, timeout=120)  # asking for more does not extend the manifest's 1 s
    assert time.monotonic() - started < 10


def test_deadline_also_bounds_waiting_on_host_work(make_agent):
    agent = make_agent(
        {"main.js": "export default async () => { await new Promise((r) => setTimeout(r, 60000)); }"},
        **_limits(timeout=1),
    )
    started = time.monotonic()
    with pytest.raises(LimitExceeded, match="wall-clock deadline"):
        run_captured(agent)
    assert time.monotonic() - started < 10


def test_memory_bomb_is_a_catchable_out_of_memory(make_agent):
    agent = make_agent(
        {
            "main.js": """
            export default function () {
              const hoard = [];
              try { for (;;) hoard.push(new Array(100000).fill(hoard.length)); }
              catch (e) { const n = hoard.length; hoard.length = 0; return [e.name, e.message, n > 10]; }
            }
            """
        },
        **_limits(memory_mb=64),
    )
    assert run_captured(agent).result.value == ["InternalError", "out of memory", True]


def test_uncaught_memory_bomb_fails_the_run(make_agent):
    agent = make_agent(
        {"main.js": "export default () => { const a = []; for (;;) a.push('x'.repeat(1 << 20) + a.length); }"},
        **_limits(memory_mb=48),
    )
    with pytest.raises(AgentFailed, match="out of memory"):
        run_captured(agent)


def test_fuel_exhaustion(make_agent):
    agent = make_agent({"main.js": "export default () => { let i = 0; for (;;) i++; }"})
    with pytest.raises(LimitExceeded, match="fuel exhausted") as info:
        run_captured(agent, fuel=20_000_000)
    assert info.value.exit_code == ExitCode.LIMIT_EXCEEDED


def test_enough_fuel_lets_a_small_agent_finish(make_agent):
    agent = make_agent({"main.js": "export default () => [1, 2, 3].map((x) => x * 2);"})
    assert run_captured(agent, fuel=200_000_000).result.value == [2, 4, 6]


def test_output_flood_is_stopped_at_the_cap(make_agent):
    agent = make_agent(
        {"main.js": "export default () => { for (;;) print('flood '.repeat(100)); }"},
        **_limits(max_output_bytes=100_000, timeout=30),
    )
    started = time.monotonic()
    with pytest.raises(LimitExceeded, match="output cap of 100000 bytes"):
        run_captured(agent)
    assert time.monotonic() - started < 10
