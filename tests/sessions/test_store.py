"""The session store: atomic state.json under SIGKILL, the listing, pruning, the lock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hugind.errors import UsageError
from hugind.sessions.listing import list_sessions, prune, render
from hugind.sessions.store import SessionBusy, SessionStore
from tests.conftest import REPO

WRITER = """
import sys
from pathlib import Path
from hugind.sessions.store import SessionStore

store = SessionStore("torn-test", Path(sys.argv[1]))
n = 0
while True:
    n += 1
    # ~1 MB per write, so a kill lands mid-write often
    store.save({"n": n, "status": "running", "messages": [{"role": "user", "content": "x" * 4096}] * 256})
    if n == 1:
        print("ready", flush=True)
"""


def test_state_json_is_never_torn_by_a_kill_during_writes(tmp_path):
    path = tmp_path / "torn-test" / "state.json"
    seen = set()
    for round_ in range(12):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path)], stdout=subprocess.PIPE, cwd=REPO, env=dict(os.environ)
        )
        try:
            assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
            deadline = time.monotonic() + 0.05 * (round_ % 4 + 1)
            while time.monotonic() < deadline:  # a reader racing the writer sees whole files only
                doc = json.loads(path.read_text())
                assert len(doc["messages"]) == 256
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        finally:
            if proc.poll() is None:
                proc.kill()
        doc = json.loads(path.read_text())
        assert doc["format"] == "hugind-session/1" and len(doc["messages"]) == 256
        seen.add(doc["n"])
    assert max(seen) > 1  # the writer did rewrite the file many times
    SessionStore("torn-test", tmp_path).acquire()  # the next user sweeps the temp files a kill left
    assert sorted(p.name for p in path.parent.iterdir()) == ["lock", "state.json"]


def _save(root: Path, session_id: str, status: str, updated: str, agent: str = "a", turns: int = 1) -> None:
    SessionStore(session_id, root).save(
        {"id": session_id, "status": status, "updated": updated, "agent": {"name": agent}, "turns": turns}
    )


def test_listing_is_newest_first_and_shows_dead_running_sessions_as_interrupted(tmp_path):
    _save(tmp_path, "old", "finished", "2026-01-01T00:00:00.000Z")
    _save(tmp_path, "new", "failed", "2026-03-01T00:00:00.000Z", turns=4)
    _save(tmp_path, "dead", "running", "2026-02-01T00:00:00.000Z")
    live = SessionStore("live", tmp_path)
    _save(tmp_path, "live", "running", "2026-02-15T00:00:00.000Z")
    live.acquire()
    (tmp_path / "half-made").mkdir()  # a directory without state.json is no session
    try:
        rows = list_sessions(tmp_path)
        assert [(r.id, r.status) for r in rows] == [
            ("new", "failed"),
            ("live", "running"),
            ("dead", "interrupted"),
            ("old", "finished"),
        ]
        table = render(rows, as_json=False).splitlines()
        assert table[0].split() == ["ID", "AGENT", "TURNS", "STATUS", "UPDATED"]
        assert table[1].split() == ["new", "a", "4", "failed", "2026-03-01T00:00:00.000Z"]
        with pytest.raises(SessionBusy, match="in use by another hugind run"):
            SessionStore("live", tmp_path).acquire()
        assert sorted(prune(0, tmp_path)) == ["dead", "new", "old"]  # a live run's session stays
        assert [r.id for r in list_sessions(tmp_path)] == ["live"]
    finally:
        live.release()


def test_prune_keeps_recent_sessions(tmp_path):
    _save(tmp_path, "recent", "finished", time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()))
    _save(tmp_path, "ancient", "finished", "2020-01-01T00:00:00.000Z")
    assert prune(30, tmp_path) == ["ancient"]
    assert [r.id for r in list_sessions(tmp_path)] == ["recent"]


def test_bad_ids_and_damaged_files_are_usage_errors(tmp_path):
    for bad in ("../x", ".hidden", "a/b", "", "x" * 200):
        with pytest.raises(UsageError, match="invalid session id"):
            SessionStore(bad, tmp_path)
    store = SessionStore("broken", tmp_path)
    store.dir.mkdir()
    store.path.write_text("{not json")
    with pytest.raises(UsageError, match="cannot read"):
        store.load()
    store.path.write_text('{"format": "something-else"}')
    with pytest.raises(UsageError, match="not a hugind session file"):
        store.load()


def test_the_sessions_command_on_an_empty_home(cli, tmp_path):
    res = cli("sessions", env={"HUGIND_HOME": str(tmp_path)})
    assert res.code == 0 and res.stdout.startswith("no saved sessions in ")
    res = cli("sessions", "--json", env={"HUGIND_HOME": str(tmp_path)})
    assert res.code == 0 and json.loads(res.stdout) == []
