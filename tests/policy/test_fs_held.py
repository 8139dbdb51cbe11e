"""``exists``/``is_file``/``is_dir`` act through the fd the policy check held.

The check opens what the path names (``O_PATH``), decides on that object's
canonical path, and hands the fd over, so there is no window between the
decision and the act: what the op reports is the object that was checked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hugind.errors import PermissionDenied
from hugind.policy.boundary import BoundaryConflict


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@pytest.fixture
def tree(agent_root: Path, tmp_path: Path) -> tuple[Path, Path]:
    data = agent_root / "data"
    data.mkdir()
    (data / "small.txt").write_text("x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "big.bin").write_bytes(b"y" * 5000)
    return data, outside


def test_a_symlink_swapped_after_the_check_changes_nothing(harness, tree):
    data, outside = tree
    h = harness({"filesystem": {"read": ["data"]}})
    os.symlink("small.txt", data / "link")
    real, fd = h.engine.check_read_held("exists", "data/link")
    assert fd is not None and real == str((data / "small.txt").resolve())
    try:
        # The attacker's swap, between the decision and the act.
        os.unlink(data / "link")
        os.symlink(outside / "big.bin", data / "link")
        assert os.fstat(fd).st_size == 1  # still the checked file, not the 5000-byte outsider
    finally:
        os.close(fd)
    # Asked again, the swapped link is judged anew and refused.
    with pytest.raises(PermissionDenied):
        h.engine.check_read_held("exists", "data/link")


def test_denials_and_absent_paths_leak_no_fd(harness, tree):
    data, outside = tree
    h = harness({"filesystem": {"read": ["data"]}})
    os.symlink(outside / "big.bin", data / "escape")
    before = _open_fds()
    for _ in range(50):
        assert isinstance(h.fails("fs.exists", path="data/escape"), PermissionDenied)
        assert isinstance(h.fails("fs.is_file", path="../outside/big.bin"), PermissionDenied)
        assert h.call("fs.exists", path="data/missing") is False
        assert h.call("fs.is_dir", path="data/small.txt") is False
    assert _open_fds() == before


@pytest.mark.parametrize(
    ("name", "exists", "is_file", "is_dir"),
    [
        ("small.txt", True, True, False),
        (".", True, False, True),
        ("to_file", True, True, False),
        ("to_dir", True, False, True),
        ("dangling", False, False, False),
        ("missing", False, False, False),
        ("missing/deeper", False, False, False),
        ("small.txt/under_a_file", False, False, False),
    ],
)
def test_answers_match_the_kind_of_what_the_path_names(harness, tree, name, exists, is_file, is_dir):
    data, _ = tree
    (data / "sub").mkdir()
    os.symlink("small.txt", data / "to_file")
    os.symlink("sub", data / "to_dir")
    os.symlink("nowhere", data / "dangling")
    h = harness({"filesystem": {"read": ["data"]}})
    path = f"data/{name}"
    assert (h.call("fs.exists", path=path), h.call("fs.is_file", path=path), h.call("fs.is_dir", path=path)) == (
        exists,
        is_file,
        is_dir,
    )


def test_entry_ops_cannot_take_the_held_path(harness, tree):
    h = harness({"filesystem": {"read": ["data"]}})
    with pytest.raises(ValueError):
        h.engine.check_read_held("lstat", "data/small.txt")


def test_the_users_backend_config_and_saved_sessions_are_never_reachable(harness, agent_root, monkeypatch):
    # $HUGIND_HOME inside a readable root: carving its config (API keys) and other
    # runs' conversations out of the root left its parent open to fs.rename (#26);
    # such a policy is now refused before the run, naming both paths.
    home = agent_root / "home"
    (home / "sessions" / "abc").mkdir(parents=True)
    (home / "config.yaml").write_text("backends: {a: {url: 'http://127.0.0.1:1', api_key: sk-secret}}\n")
    monkeypatch.setenv("HUGIND_HOME", str(home))
    with pytest.raises(BoundaryConflict) as refused:
        harness({"filesystem": {"read": ["home"], "write": ["home"]}}, mode="read-write")
    assert refused.value.exit_code == 2
    assert str(home) in str(refused.value) and str(home / "config.yaml") in str(refused.value)
    assert "HUGIND_HOME" in str(refused.value)
