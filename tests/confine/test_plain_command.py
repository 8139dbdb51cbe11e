"""Plain commands run without a shell (hugind/policy/plain_command.py).

The decision is tested on strings alone; then real agents, in both confinement
modes, compare what a command sees and prints when executed directly with what
the same command prints when the shell runs it (a trailing ``; :`` keeps the shell).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hugind.confine import zygotes
from hugind.policy.plain_command import plain_words
from tests.redteam.helpers import run_attack


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("true", ("true",)),
        ("ls -la src", ("ls", "-la", "src")),
        ("  git\tstatus --short  ", ("git", "status", "--short")),
        ("dd if=a.txt of=b.txt bs=4k", ("dd", "if=a.txt", "of=b.txt", "bs=4k")),
        ("./tool.sh a,b:c+d@e%f^g", ("./tool.sh", "a,b:c+d@e%f^g")),
    ],
)
def test_plain_strings_are_their_words(command: str, words: tuple[str, ...]) -> None:
    assert plain_words(command) == words


@pytest.mark.parametrize(
    "command",
    [
        "",
        "   ",
        "ls *.txt",  # glob
        "ls a?",
        "ls [ab]",
        "cat ~/x",  # tilde
        "echo $HOME",  # expansion (and a builtin)
        "ls $(pwd)",
        "ls `pwd`",
        "ls 'a b'",  # quotes
        'ls "a"',
        "ls a\\ b",  # backslash
        "ls; rm x",  # operators
        "ls && rm x",
        "ls | wc",
        "ls &",
        "ls > out",  # redirections
        "ls < in",
        "ls\nrm x",  # newline
        "ls # comment",
        "ls {a,b}",  # braces
        "(ls)",
        "! ls",
        "FOO=1 ls",  # an assignment
        "A=b",
        "echo hi",  # builtins, whose behaviour differs from the program's
        "printf x",
        "test -f x",
        "[ -f x ]",
        "pwd",
        "kill 1",
        "cd /",
        "exec ls",
        "command ls",
        "if",  # reserved words
        "time ls",
        "ls é",  # outside the plain alphabet
    ],
)
def test_anything_the_shell_does_keeps_the_shell(command: str) -> None:
    assert plain_words(command) is None


SEEN = """
const pairs = [["env", "env; :"], ["ls -a . no-such-entry", "ls -a . no-such-entry; exit $?"],
               ["./hello.sh one", "./hello.sh one; :"], ["true", "true; :"], ["false", "false; exit $?"],
               ["no-such-program-here", "no-such-program-here; exit $?"]];
const out = [];
for (const [direct, shell] of pairs) {
  out.push([await run_command(direct, {detailed: true}), await run_command(shell, {detailed: true})]);
}
return out;
"""


def test_a_plain_command_sees_and_prints_what_it_would_under_the_shell(
    mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[tuple[str, ...]] = []
    start = zygotes.Zygote.start

    def recording(self, plan, out_w, err_w, watch=None):  # type: ignore[no-untyped-def]
        started.append(plan.argv)
        return start(self, plan, out_w, err_w, watch)

    monkeypatch.setattr(zygotes.Zygote, "start", recording)
    root = tmp_path / "agent"
    root.mkdir()
    script = root / "hello.sh"  # a program named by a relative path
    script.write_text('#!/bin/sh\necho "hello $1"\n')
    script.chmod(0o755)
    out = run_attack(root, SEEN, {"filesystem": {"read": ["."]}, "shell": {"allow": True}})
    results = out.value["value"]
    env_direct, env_shell = results[0]
    # The same variables (dash lists them in its own hash order, not the order it got them).
    assert sorted(env_direct["stdout"].splitlines()) == sorted(env_shell["stdout"].splitlines())
    assert "PWD=" + os.path.realpath(root) in env_direct["stdout"].splitlines()
    assert {**env_direct, "stdout": ""} == {**env_shell, "stdout": ""}
    ls_direct, ls_shell = results[1]
    assert ls_direct == ls_shell and ls_direct["exit_code"] == 2
    assert ls_direct["stderr"].startswith("ls: cannot access 'no-such-entry'")  # argv[0] as typed
    assert results[2][0] == results[2][1] and results[2][0]["stdout"] == "hello one\n"
    assert results[3][0] == results[3][1] and results[3][0]["exit_code"] == 0
    assert results[4][0] == results[4][1] and results[4][0]["exit_code"] == 1
    assert results[5][0] == results[5][1] and results[5][0]["exit_code"] == 127  # the shell's "not found"
    # What the zygote was asked to execute: the words, no shell, for the plain ones only.
    direct = [argv for argv in started if argv[0] != "/bin/sh"]
    if zygotes.enabled():
        assert direct == [("env",), ("ls", "-a", ".", "no-such-entry"), ("./hello.sh", "one"), ("true",), ("false",)]
        assert len(started) == 12
    else:  # the per-command path keeps the shell: the same results, one process more
        assert started == []
