"""Whitelisted tools whose own options run programs: denied under a list."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hugind.policy.exec_options import hidden_exec
from hugind.policy.model import Denied, ShellPolicy
from hugind.policy.shell import decide_shell
from hugind.policy.shell_parse import Word


def words(*texts: str) -> list[Word]:
    return [Word(t, True, False, t) for t in texts]


@pytest.mark.parametrize(
    ("tool", "args", "fragment"),
    [
        ("sed", ["-n", "1e touch x", "f"], "without --sandbox"),
        ("gsed", ["s/a/b/e", "f"], "without --sandbox"),
        ("tar", ["-cf", "/dev/null", "f", "--checkpoint-action=exec=touch x"], "--checkpoint-action"),
        ("tar", ["--to-command=sh", "-xf", "a.tar"], "--to-command"),
        ("tar", ["-cIgzip", "-f", "a.tgz", "f"], "-cIgzip"),
        ("tar", ["cIf", "prog", "a.tar", "f"], "cIf"),
        ("sort", ["--compress-program=sh", "f"], "--compress-program"),
        ("split", ["--filter=sh", "f"], "--filter"),
        ("rsync", ["-avze", "sh -c x", "a", "b"], "-avze"),
        ("rsync", ["--rsh=sh", "a", "b"], "--rsh"),
        ("zip", ["-TT", "sh", "a.zip", "f"], "-TT"),
        ("man", ["-P", "touch x", "ls"], "-P"),
        ("git", ["status"], "core.fsmonitor"),
        ("ssh", ["host"], "ProxyCommand"),
        ("ed", ["f"], "'!command'"),
    ],
)
def test_exec_capable_options_are_reported(tool, args, fragment):
    reason = hidden_exec({tool}, words(*args))
    assert reason is not None and fragment in reason


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("sed", ["--sandbox", "-n", "1,5p", "f"]),
        ("tar", ["-tvf", "a.tar"]),
        ("sort", ["-rn", "f"]),
        ("split", ["-l", "10", "f"]),
        ("rsync", ["-av", "a", "b"]),
        ("ls", ["-la"]),
        ("tar", ["-xf", "a.tar", "--", "--to-command=x"]),  # after --, a file name
    ],
)
def test_plain_uses_pass(tool, args):
    assert hidden_exec({tool}, words(*args)) is None


def test_an_expansion_among_the_options_of_such_a_tool_is_uncertain():
    assert "expansion" in hidden_exec({"tar"}, [Word("$OPT", False, False, "$OPT")])


@pytest.mark.skipif(shutil.which("sed") is None, reason="sed not installed")
def test_whitelisted_sed_needs_sandbox_in_a_real_shell_string(tmp_path: Path):
    policy = ShellPolicy(allow=True, whitelist=("sed",))
    with pytest.raises(Denied) as info:
        decide_shell(policy, "sed -n '1e touch pwned' notes.txt", tmp_path)
    assert info.value.rule == "shell.uncertain" and "--sandbox" in info.value.message
    plan = decide_shell(policy, "sed --sandbox -n 1p notes.txt", tmp_path)
    assert [p.name for p in plan.programs] == ["sed"]
