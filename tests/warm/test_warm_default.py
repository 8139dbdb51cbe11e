"""When a run starts a warm server, and what ``hugind warm`` lists (issue 28).

A server outlives the run that started it: only a run at a terminal starts one,
never under ``CI``, unless ``HUGIND_WARM=1`` asks. ``hugind warm`` lists this
install's servers, under a header, unless ``--all``.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import time
import uuid

import pytest

from hugind.warm.spawn import should_start
from tests.conftest import REPO
from tests.support.warm import end_servers, servers

NONE_STARTED = "starts none (not at a terminal, or CI is set)"


@pytest.mark.parametrize(
    ("environ", "interactive", "expected"),
    [
        ({}, True, True),
        ({}, False, False),
        ({"CI": "true"}, True, False),
        ({"CI": ""}, True, True),
        ({"HUGIND_WARM": "1"}, False, True),
        ({"HUGIND_WARM": "1", "CI": "1"}, False, True),
    ],
)
def test_who_starts_a_server(environ, interactive, expected):
    assert should_start(environ, interactive) is expected


@pytest.fixture
def key():
    key = f"default-{uuid.uuid4().hex[:12]}"
    yield key
    end_servers(key)


def _env(key: str, **extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("HUGIND_WARM") and k != "CI"}
    return {**base, "HUGIND_WARM_KEY": key, "HUGIND_WARM_TRACE": "1", "HUGIND_WARM_IDLE": "30", **extra}


def _run(env: dict[str, str], terminal: bool) -> str:
    """One ``hugind run``; with ``terminal``, its stdin is a pseudo-terminal. Its stderr."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "hugind", "run", "examples/hello"],
            stdin=follower if terminal else subprocess.DEVNULL,
            capture_output=True,
            env=env,
            cwd=REPO,
            timeout=120,
        )
    finally:
        os.close(leader)
        os.close(follower)
    assert proc.returncode == 0, proc.stderr
    return proc.stderr.decode()


def _server_appears(key: str, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if servers(key):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("extra", [{}, {"CI": "1"}], ids=["script", "ci"])
def test_a_run_not_at_a_terminal_or_under_ci_starts_no_server(key, extra):
    stderr = _run(_env(key, **extra), terminal=bool(extra))  # CI: even at a terminal
    assert NONE_STARTED in stderr
    assert not _server_appears(key, 1.5)


def test_a_run_at_a_terminal_starts_one(key):
    stderr = _run(_env(key), terminal=True)
    assert "this run is cold, and starts one" in stderr
    assert _server_appears(key, 30)


def test_hugind_warm_1_starts_one_anywhere(key):
    stderr = _run(_env(key, HUGIND_WARM="1", CI="1"), terminal=False)
    assert "this run is cold, and starts one" in stderr
    assert _server_appears(key, 30)


# A process that looks like another install's server: its name and command line (spawn.py's).
_OTHER = "import ctypes, time; ctypes.CDLL(None).prctl(15, b'hugind-warm', 0, 0, 0); time.sleep(60)"


def test_hugind_warm_lists_this_installs_servers_under_a_header(key, tmp_path):
    _run(_env(key, HUGIND_WARM="1"), terminal=False)
    assert _server_appears(key, 30)
    (ours,) = servers(key)
    other = subprocess.Popen([sys.executable, "-c", _OTHER, key, str(tmp_path / "elsewhere" / "hugind")])
    try:
        time.sleep(0.5)
        listed = subprocess.run(
            [sys.executable, "-m", "hugind", "warm"], capture_output=True, text=True, env=_env(key), cwd=REPO
        )
        every = subprocess.run(
            [sys.executable, "-m", "hugind", "warm", "--all"], capture_output=True, text=True, env=_env(key), cwd=REPO
        )
    finally:
        other.kill()
        other.wait()
    header, *rows = listed.stdout.splitlines()
    assert header.split() == ["PID", "AGE", "MEMORY", "(RSS)", "RUNS", "NOW"]
    pids = [int(row.split()[0]) for row in rows]
    assert ours in pids and other.pid not in pids
    assert every.stdout.splitlines()[0].split()[-1] == "INSTALL"
    by_pid = {int(row.split()[0]): row for row in every.stdout.splitlines()[1:]}
    assert str(tmp_path / "elsewhere" / "hugind") in by_pid[other.pid]
    assert by_pid[ours].endswith(os.path.join(str(REPO), "hugind"))
