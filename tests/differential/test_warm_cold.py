"""Warm vs cold ``hugind run``: the real executable in subprocesses, each agent of
tests/differential/agents.py once served by a warm server (hugind/warm) and once with
``HUGIND_WARM=0``; exit status, stdout, stderr and audit log must be byte-identical
(the audit log's "ts" alone is normalised; the warm run's trace lines, asked for
with ``HUGIND_WARM_TRACE=1`` to prove it was served warm, are taken out of its stderr).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.differential.agents import REPO, describe, normalise
from tests.support.warm import end_servers

TRACE = b"hugind: warm: "
SERVED = TRACE + b"served by a warm server"


@pytest.fixture
def warm_env():
    key = f"differential-{uuid.uuid4().hex[:12]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HUGIND_WARM")}
    env.pop("HUGIND_RECYCLE", None)
    env.pop("HUGIND_RAW_FFI", None)
    env.update(HUGIND_WARM_KEY=key, HUGIND_WARM_TRACE="1", HUGIND_WARM_IDLE="60")
    yield env
    end_servers(key)


def _run(env: dict[str, str], case: dict, audit: Path, **extra: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "hugind", "run", case["agent"], "--audit", str(audit)]
    if case.get("backend"):
        argv += ["--backend", case["backend"]]
    if case.get("timeout"):
        argv += ["--timeout", str(case["timeout"])]
    argv += ["--", *case.get("args", [])]
    return subprocess.run(
        argv, stdin=subprocess.DEVNULL, capture_output=True, env={**env, **extra}, cwd=REPO, timeout=120
    )


def _outcome(proc: subprocess.CompletedProcess, audit: Path) -> dict:
    stderr = b"".join(line for line in proc.stderr.splitlines(keepends=True) if not line.startswith(TRACE))
    return normalise(
        {
            "code": proc.returncode,
            "stdout": proc.stdout.decode("utf-8", "backslashreplace"),
            "stderr": stderr.decode("utf-8", "backslashreplace"),
            "audit": audit.read_text() if audit.exists() else None,
        }
    )


def _start_server(env: dict[str, str], case: dict, work: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        # Off a terminal a run starts no server unless asked (HUGIND_WARM=1); the runs
        # compared below ask for nothing and use the one started here.
        if SERVED in _run(env, case, work / "start.jsonl", HUGIND_WARM="1").stderr:
            return
        time.sleep(0.2)
    raise AssertionError("no warm server came up")


def test_a_warm_run_gives_what_a_cold_one_gives(warm_env, cases, tmp_path):
    _start_server(warm_env, cases[0], tmp_path)
    for case in cases:
        hot_audit, cold_audit = tmp_path / f"{case['name']}-warm.jsonl", tmp_path / f"{case['name']}-cold.jsonl"
        hot = _run(warm_env, case, hot_audit)
        cold = _run(warm_env, case, cold_audit, HUGIND_WARM="0")
        assert SERVED in hot.stderr, (case["name"], hot.stderr)
        assert TRACE not in cold.stderr
        warm, plain = _outcome(hot, hot_audit), _outcome(cold, cold_audit)
        assert warm == plain, f"{case['name']}: warm {describe(warm)}\ncold {describe(plain)}"
