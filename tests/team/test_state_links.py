"""A planted symbolic link in a team state directory (often inside a cloned repository)
never makes hugind create, lock or append to a file elsewhere."""

from __future__ import annotations

import pytest

from hugind.errors import UsageError
from hugind.team.command import run_team_command
from hugind.team.state import StateStore
from tests.team.helpers import task, write_workflow

ECHO = {"main.js": "export default (input) => input.team.task.id;"}


def test_a_lock_that_is_a_link_is_refused(tmp_path):
    victim = tmp_path / "victim"
    state = tmp_path / "state"
    state.mkdir()
    (state / "lock").symlink_to(victim)
    with pytest.raises(UsageError, match="cannot use the state directory"), StateStore(state).locked():
        pass
    assert not victim.exists()


def test_a_logs_folder_that_is_a_link_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    state = tmp_path / "state"
    state.mkdir()
    (state / "logs").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UsageError, match="symbolic link"), StateStore(state).locked():
        pass
    assert list(elsewhere.iterdir()) == []


def test_a_task_log_that_is_a_link_is_never_appended_to(tmp_path):
    victim = tmp_path / "victim"
    victim.write_bytes(b"untouched\n")
    store = StateStore(tmp_path / "state")
    with store.locked():
        store.log_path("t1").symlink_to(victim)
        with pytest.raises(UsageError, match="cannot open the task's log"):
            store.open_log("t1")
        with store.open_log("t2") as log:  # a plain log still opens
            log.write(b"ok\n")
    assert victim.read_bytes() == b"untouched\n"
    assert store.log_path("t2").read_bytes() == b"ok\n"


def test_a_default_state_folder_that_is_a_link_is_refused(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    workflow = write_workflow(repo, {"a": ECHO}, [task("t1", "a")])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".hugind-team").symlink_to(elsewhere, target_is_directory=True)
    monkeypatch.chdir(repo)
    with pytest.raises(UsageError, match="symbolic link"):
        run_team_command(
            workflow,
            state_dir=None,
            backend=None,
            resume=False,
            fresh=False,
            max_parallel=None,
            as_json=False,
            quiet=True,
        )
    assert list(elsewhere.iterdir()) == []


def test_a_plain_default_state_folder_still_works(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    workflow = write_workflow(repo, {"a": ECHO}, [task("t1", "a")])
    monkeypatch.chdir(repo)
    code = run_team_command(
        workflow, state_dir=None, backend=None, resume=False, fresh=False, max_parallel=None, as_json=True, quiet=True
    )
    assert code == 0
    assert (repo / ".hugind-team" / "test-team" / "logs" / "t1.log").is_file()
