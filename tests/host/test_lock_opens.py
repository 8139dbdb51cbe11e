"""Lock and log files in folders someone else controls (a session's, a team's state directory
in a cloned working tree) are opened beneath their folder with no link followed
(hugind/host/openat2.open_in): a link swapped in after the folder's check leads nowhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from hugind.errors import UsageError
from hugind.sessions.store import SessionStore
from hugind.team.state import StateStore


def test_a_logs_folder_swapped_for_a_link_after_the_lock_is_refused(tmp_path: Path):
    state, outside = tmp_path / "state", tmp_path / "outside"
    outside.mkdir()
    store = StateStore(state)
    with store.locked():  # checks logs/ for links and makes it
        (state / "logs").rmdir()
        (state / "logs").symlink_to(outside)  # after that check: only the open can refuse it
        with pytest.raises(UsageError, match="cannot open the task's log"):
            store.open_log("task")
    assert list(outside.iterdir()) == []


def test_a_lock_that_is_a_link_is_refused_and_nothing_is_created_where_it_points(tmp_path: Path):
    state, outside = tmp_path / "state", tmp_path / "outside"
    (state / "logs").mkdir(parents=True)
    outside.mkdir()
    (state / "lock").symlink_to(outside / "planted")
    with pytest.raises(UsageError, match="cannot use the state directory"), StateStore(state).locked():
        pass
    assert list(outside.iterdir()) == []


def test_a_session_lock_that_is_a_link_is_refused(tmp_path: Path):
    root, outside = tmp_path / "sessions", tmp_path / "outside"
    (root / "s1").mkdir(parents=True)
    outside.mkdir()
    (root / "s1" / "lock").symlink_to(outside / "planted")
    store = SessionStore("s1", root)
    with pytest.raises(UsageError, match="cannot use the session directory"):
        store.acquire()
    assert list(outside.iterdir()) == []
    assert store.in_use() is False  # a link is not a held lock


def test_a_session_lock_is_taken_and_seen(tmp_path: Path):
    store = SessionStore("s2", tmp_path / "sessions")
    store.acquire()
    try:
        assert SessionStore("s2", tmp_path / "sessions").in_use() is True
    finally:
        store.release()
    assert store.in_use() is False
