"""The run's limits hold for Python agents: deadline (busy, sleeping, waiting on the host), output cap, memory."""

from __future__ import annotations

import time

import pytest

from hugind.errors import ExitCode, LimitExceeded
from tests.conftest import run_cli
from tests.python.helpers import run_py, write_agent

LIMITS = {"limits": {"timeout": 2}}


@pytest.mark.parametrize(
    "source",
    [
        "while True:\n    pass\n",
        "import time\ntime.sleep(60)\n",
        "import hugind\nhugind.run_command('sleep 30')\n",
        "import asyncio\nasync def main():\n    await asyncio.sleep(60)\n",
    ],
    ids=["busy", "time.sleep", "blocking-op", "asyncio.sleep"],
)
def test_the_deadline_stops_the_agent(tmp_path, source):
    perms = {**LIMITS, "shell": {"allow": True, "timeout": 60}}
    root = write_agent(tmp_path / "a", source, perms)
    start = time.monotonic()
    with pytest.raises(LimitExceeded) as err:
        run_py(root)
    assert time.monotonic() - start < 6
    assert "deadline" in err.value.message or "timed out" in err.value.message


def test_the_output_cap_stops_a_flood(tmp_path):
    cap = {"limits": {"max_output_bytes": 100_000}}
    root = write_agent(tmp_path / "a", "while True:\n    print('x' * 1000)\n", cap)
    res = run_cli("run", str(root))
    assert res.code == ExitCode.LIMIT_EXCEEDED, res.stderr
    assert "output cap" in res.stderr
    assert len(res.stdout) <= 100_000


def test_a_memory_bomb_hits_the_cap(tmp_path):
    bomb = "x = []\nwhile True:\n    x.append(bytearray(1 << 20))\n"
    root = write_agent(tmp_path / "a", bomb, {"limits": {"memory_mb": 96}})
    res = run_cli("run", str(root))
    assert res.code != 0
    assert "MemoryError" in res.stderr or "memory" in res.stderr.lower()


def test_an_unsettled_await_is_reported_not_waited_on(tmp_path):
    src = "import asyncio\n\nasync def main():\n    await asyncio.get_running_loop().create_future()\n"
    res = run_cli("run", str(write_agent(tmp_path / "a", src)))
    assert res.code == ExitCode.AGENT_FAILED
    assert "Stalled" in res.stderr


def test_output_printed_before_the_deadline_is_kept(tmp_path):
    root = write_agent(tmp_path / "a", "print('started')\nwhile True:\n    pass\n", {"limits": {"timeout": 1}})
    res = run_cli("run", str(root))
    assert res.code == ExitCode.LIMIT_EXCEEDED
    assert res.stdout == "started\n"
