"""A decision's lookups are shared inside it, never across decisions: a program or a
whitelisted path whose symlink is retargeted between two commands is judged anew."""

from __future__ import annotations

from pathlib import Path

import pytest

from hugind.policy.model import Denied, ShellPolicy
from hugind.policy.shell import decide_shell, decide_spawn


def _tool(path: Path) -> Path:
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_spawn_through_a_retargeted_link(tmp_path: Path) -> None:
    allowed = _tool(tmp_path / "allowed")
    other = _tool(tmp_path / "other")
    link = tmp_path / "link"
    link.symlink_to(allowed)
    policy = ShellPolicy(allow=True, whitelist=(str(allowed),))
    assert decide_spawn(policy, str(link), [], tmp_path).argv[0] == str(link)
    link.unlink()
    link.symlink_to(other)
    with pytest.raises(Denied) as denied:
        decide_spawn(policy, str(link), [], tmp_path)
    assert denied.value.rule == "shell.whitelist"


def test_whitelist_entry_retargeted(tmp_path: Path) -> None:
    """The whitelist's own entry is a link: it is resolved again for the next command."""
    first = _tool(tmp_path / "first")
    second = _tool(tmp_path / "second")
    entry = tmp_path / "entry"
    entry.symlink_to(first)
    policy = ShellPolicy(allow=True, whitelist=(str(entry),))
    decide_shell(policy, str(first), tmp_path)
    entry.unlink()
    entry.symlink_to(second)
    with pytest.raises(Denied):
        decide_shell(policy, str(first), tmp_path)
    decide_shell(policy, str(second), tmp_path)


def test_one_decision_sees_one_answer(tmp_path: Path) -> None:
    """Within a decision the program is named once in the analysis and in the lists."""
    tool = _tool(tmp_path / "tool")
    policy = ShellPolicy(allow=True, whitelist=(str(tool),))
    plan = decide_shell(policy, f"{tool} && {tool}", tmp_path)
    assert [p.resolved() for p in plan.programs] == [str(tool), str(tool)]
