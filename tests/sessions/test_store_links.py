"""A planted symbolic link never makes the session store create, lock or write a file elsewhere."""

from __future__ import annotations

import pytest

from hugind.errors import UsageError
from hugind.sessions.store import SessionStore


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HUGIND_HOME", str(home))
    return home


def test_a_lock_that_is_a_link_is_refused_and_its_target_never_made(home, tmp_path):
    victim = tmp_path / "victim"
    session = home / "sessions" / "s1"
    session.mkdir(parents=True)
    (session / "lock").symlink_to(victim)
    store = SessionStore("s1")
    with pytest.raises(UsageError, match="cannot use the session directory"):
        store.acquire()
    assert not victim.exists()
    assert store.in_use() is False  # probing a planted link opens nothing either


def test_a_session_folder_that_is_a_link_is_refused(home, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (home / "sessions").mkdir()
    (home / "sessions" / "s2").symlink_to(elsewhere, target_is_directory=True)
    store = SessionStore("s2")
    with pytest.raises(UsageError, match="symbolic link"):
        store.acquire()
    with pytest.raises(UsageError, match="symbolic link"):
        store.save({"status": "running"})
    assert list(elsewhere.iterdir()) == []


def test_a_sessions_root_that_is_a_link_is_refused(home, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (home / "sessions").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UsageError, match="symbolic link"):
        SessionStore("s3").acquire()
    assert list(elsewhere.iterdir()) == []


def test_a_plain_session_still_locks(home):
    store = SessionStore("s4")
    store.acquire()
    try:
        assert (home / "sessions" / "s4" / "lock").is_file()
        assert store.in_use()
    finally:
        store.release()
