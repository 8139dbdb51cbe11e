"""plan.real_path answers what os.path.realpath answers, for every kind of path a plan resolves."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hugind.confine.plan import real_path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "dir" / "sub").mkdir(parents=True)
    (tmp_path / "dir" / "prog").write_text("#!/bin/sh\n")
    (tmp_path / "to-dir").symlink_to(tmp_path / "dir")
    (tmp_path / "rel").symlink_to("dir/sub")
    (tmp_path / "chain").symlink_to("to-dir")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "deleted (deleted)").write_text("")
    return tmp_path


@pytest.mark.parametrize(
    "name",
    ["dir", "dir/prog", "to-dir", "to-dir/prog", "rel", "chain/sub/..", "dangling", "missing/x", "deleted (deleted)"],
)
def test_same_answer_as_realpath(tree: Path, name: str) -> None:
    path = str(tree / name)
    assert real_path(path) == os.path.realpath(path)


def test_system_program_through_links() -> None:
    assert real_path("/bin/sh") == os.path.realpath("/bin/sh")


def test_a_swapped_link_is_seen_at_once(tmp_path: Path) -> None:
    """Nothing is remembered between calls: a link retargeted in between resolves anew."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "a")
    assert real_path(str(link)) == str(tmp_path / "a")
    link.unlink()
    link.symlink_to(tmp_path / "b")
    assert real_path(str(link)) == str(tmp_path / "b")
