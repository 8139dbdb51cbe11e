"""hugind/policy/shell.py at its edges: ``decide_spawn``'s exact rules and messages, the options
of ``sh`` before its ``-c`` string, and the nesting limit at its boundary.

Written against the survivors of a mutation run (bench/mutation.py policy.shell).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hugind.policy.model import Denied, ShellPolicy
from hugind.policy.shell import MAX_NESTING, SAFE_PATH, decide_shell, decide_spawn

CWD = Path("/")
OPEN = ShellPolicy(allow=True)
WHITE = ShellPolicy(allow=True, whitelist=("sh", "echo"))


def where(name: str) -> str:
    found = shutil.which(name, path=SAFE_PATH)
    if found is None:
        pytest.skip(f"{name} is not installed")
    return found


def refusal(call) -> tuple[str, str]:
    with pytest.raises(Denied) as denied:
        call()
    return denied.value.rule, denied.value.message


def test_spawn_without_strict_needs_no_whitelist():
    plan = decide_spawn(OPEN, "ls", ["-l"], CWD)
    assert plan.argv == (where("ls"), "-l") and plan.cwd == CWD
    assert [(p.name, p.path) for p in plan.programs] == [("ls", where("ls"))]


def test_spawn_refusals_name_their_rule_and_cause():
    assert refusal(lambda: decide_spawn(OPEN, "ls", [], CWD, strict=True)) == (
        "shell.strict",
        "shell: spawn refused: --strict requires permissions.shell.whitelist",
    )
    assert refusal(lambda: decide_spawn(ShellPolicy(), "ls", [], CWD)) == (
        "shell.allow",
        "shell: disabled (permissions.shell.allow is false)",
    )
    bad = ("shell.syntax", "shell: empty program name or NUL byte in arguments")
    assert refusal(lambda: decide_spawn(OPEN, "", [], CWD)) == bad
    assert refusal(lambda: decide_spawn(OPEN, "ls", ["a\0b"], CWD)) == bad
    assert refusal(lambda: decide_spawn(OPEN, "l\0s", [], CWD)) == bad
    assert refusal(lambda: decide_spawn(OPEN, "no-such-prog-hugind", ["a"], CWD)) == (
        "shell.not-found",
        "shell: program 'no-such-prog-hugind' not found in the safe PATH",
    )


def test_spawn_under_a_whitelist_shows_the_whole_argv_in_its_messages():
    assert refusal(lambda: decide_spawn(WHITE, "ls", ["a", "b"], CWD)) == (
        "shell.whitelist",
        "shell: program 'ls' is not in the whitelist ('ls a b')",
    )
    assert refusal(lambda: decide_spawn(WHITE, "no-such-prog-hugind", ["a", "b"], CWD)) == (
        "shell.not-found",
        "shell: program 'no-such-prog-hugind' is not found in the safe PATH ('no-such-prog-hugind a b')",
    )
    assert refusal(lambda: decide_spawn(WHITE, "ls", ["x" * 200], CWD))[0] == "shell.whitelist"
    _, message = refusal(lambda: decide_spawn(WHITE, "ls", ["x" * 200], CWD))
    assert message == f"shell: program 'ls' is not in the whitelist ('ls {'x' * 114}...')"
    # A spawn's words are taken as they are: "FOO=bar" is a program name, not an assignment.
    assert refusal(lambda: decide_spawn(WHITE, "FOO=bar", [], CWD)) == (
        "shell.not-found",
        "shell: program 'FOO=bar' is not found in the safe PATH ('FOO=bar')",
    )
    plan = decide_spawn(WHITE, "echo", ["'a b'", "*", "$X"], CWD)  # no quoting, glob or expansion
    assert plan.argv == (where("echo"), "'a b'", "*", "$X")


def test_a_spawned_shell_string_is_analysed_under_the_lists():
    assert refusal(lambda: decide_spawn(WHITE, "sh", ["-c", "echo $(id)"], CWD)) == (
        "shell.whitelist",
        "shell: program 'id' is not in the whitelist ('sh -c echo $(id)')",
    )
    assert refusal(lambda: decide_spawn(ShellPolicy(allow=True, blacklist=("rm",)), "sh", ["-c", "rm x"], CWD)) == (
        "shell.blacklist",
        "shell: program 'rm' matches blacklist entry 'rm' in 'sh -c rm x'",
    )
    plan = decide_spawn(OPEN, "sh", ["-c", "echo $(id)"], CWD)
    assert [p.name for p in plan.programs] == ["sh", "id", "echo"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["-c", "--", "rm x"], ("shell.whitelist", "rm", "sh -c -- rm x")),
        (["-c", "--", "-x"], ("shell.not-found", "-x", "sh -c -- -x")),
        (["-o", "errexit", "-c", "rm x"], ("shell.whitelist", "rm", "sh -o errexit -c rm x")),
        (["+o", "errexit", "-c", "rm x"], ("shell.whitelist", "rm", "sh +o errexit -c rm x")),
        (["-O", "extglob", "-c", "rm x"], ("shell.whitelist", "rm", "sh -O extglob -c rm x")),
        (["+O", "extglob", "-c", "rm x"], ("shell.whitelist", "rm", "sh +O extglob -c rm x")),
        (["-ec", "rm x"], ("shell.whitelist", "rm", "sh -ec rm x")),
        (["--norc", "-c", "rm x"], ("shell.whitelist", "rm", "sh --norc -c rm x")),
    ],
    ids=["dashdash", "dashdash-then-dash", "-o", "+o", "-O", "+O", "-ec", "--norc"],
)
def test_the_c_string_is_found_past_options_and_their_values(args, expected):
    rule, program, shown = expected
    wording = "is not in the whitelist" if rule == "shell.whitelist" else "is not found in the safe PATH"
    assert refusal(lambda: decide_spawn(WHITE, "sh", args, CWD)) == (
        rule,
        f"shell: program '{program}' {wording} ({shown!r})",
    )


@pytest.mark.parametrize(
    "args",
    [["script.sh"], ["-e"], ["+c", "rm x"], ["-c", "echo hi", "name", "arg"]],
    ids=["script", "options-only", "+c-is-not-c", "c-with-positional"],
)
def test_shells_without_a_c_string_or_with_an_allowed_one_pass(args):
    plan = decide_spawn(WHITE, "sh", args, CWD)
    assert plan.argv == (where("sh"), *args)


def test_sh_c_without_its_string_is_a_syntax_error():
    assert refusal(lambda: decide_spawn(WHITE, "sh", ["-c"], CWD)) == (
        "shell.syntax",
        "shell: cannot parse 'sh -c': 'sh -c' without a command string",
    )


def test_an_expansion_among_sh_arguments_is_uncertain_under_a_whitelist():
    assert refusal(lambda: decide_shell(WHITE, 'sh -c "$CMD"', CWD)) == (
        "shell.uncertain",
        "shell: cannot analyze an expansion among the arguments of 'sh' with certainty in "
        "'sh -c \"$CMD\"'; denied because a whitelist or blacklist is set",
    )


def test_nesting_is_refused_just_past_the_limit():
    policy = ShellPolicy(allow=True, whitelist=("env", "echo"))

    def spawn(depth: int):
        return decide_spawn(policy, "env", ["env"] * (depth - 1) + ["echo", "hi"], CWD)

    assert MAX_NESTING == 16
    assert [p.name for p in spawn(MAX_NESTING).programs][-1] == "echo"
    rule, message = refusal(lambda: spawn(MAX_NESTING + 1))
    assert rule == "shell.uncertain"
    assert message.startswith(
        f"shell: cannot analyze programs nested more than {MAX_NESTING} deep (wrappers, -c strings, eval) "
        "with certainty in 'env env"
    )
