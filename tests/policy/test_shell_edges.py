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


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["-e", "-o", "errexit", "-c", "rm x"], "sh -e -o errexit -c rm x"),  # -o takes the next word
        (["-e", "--norc", "-c", "rm x"], "sh -e --norc -c rm x"),  # a long option is one word
    ],
)
def test_options_after_others_still_lead_to_the_c_string(args, shown):
    assert refusal(lambda: decide_spawn(WHITE, "sh", args, CWD)) == (
        "shell.whitelist",
        f"shell: program 'rm' is not in the whitelist ({shown!r})",
    )


@pytest.mark.parametrize("option", ["--rcfile", "--init-file"])
def test_a_startup_file_option_is_uncertain(option):
    assert refusal(lambda: decide_spawn(WHITE, "sh", [option, "f", "-c", "x"], CWD)) == (
        "shell.uncertain",
        f"shell: cannot analyze option {option} of 'sh' with certainty in 'sh {option} f -c x'; denied because "
        "a whitelist or blacklist is set",
    )


@pytest.mark.parametrize(
    "args",
    [["--norc", "script.sh"], ["Xc", "-c", "rm x"], ["-", "-c", "rm x"]],
    ids=["long-option-with-c-in-it", "script-named-like-an-option", "dash-ends-options"],
)
def test_words_that_are_not_a_c_option_leave_a_script_run(args):
    """No -c string: sh runs a script (or stdin) with these arguments; a letter c elsewhere
    (in --norc, in a script name) is not the -c option."""
    assert decide_spawn(WHITE, "sh", args, CWD).argv == (where("sh"), *args)


def test_a_c_string_after_dashdash_built_from_expansions_is_uncertain():
    assert refusal(lambda: decide_shell(WHITE, 'sh -c -- "$CMD"', CWD)) == (
        "shell.uncertain",
        "shell: cannot analyze a 'sh -c' string built from expansions with certainty in 'sh -c -- \"$CMD\"'; "
        "denied because a whitelist or blacklist is set",
    )


def test_path_and_dangerous_variables_are_refused_by_name():
    path_refused = ("shell.env", "shell: changing PATH is not allowed when a whitelist or blacklist is set")
    assert refusal(lambda: decide_shell(WHITE, "PATH=/tmp echo hi", CWD)) == path_refused
    env_white = ShellPolicy(allow=True, whitelist=("env", "echo"))
    assert refusal(lambda: decide_spawn(env_white, "env", ["PATH=/tmp", "echo"], CWD)) == path_refused
    assert decide_spawn(OPEN, "env", ["PATH=/tmp", "echo"], CWD).argv[1:] == ("PATH=/tmp", "echo")
    assert refusal(lambda: decide_spawn(OPEN, "env", ["LD_PRELOAD=/x", "echo"], CWD)) == (
        "shell.env",
        "shell: setting LD_PRELOAD is not allowed",
    )


def test_find_exec_right_after_find_is_analysed():
    policy = ShellPolicy(allow=True, whitelist=("find",))
    assert refusal(lambda: decide_spawn(policy, "find", ["-exec", "rm", "x", ";"], CWD)) == (
        "shell.whitelist",
        "shell: program 'rm' is not in the whitelist ('find -exec rm x ;')",
    )


def test_a_relative_whitelist_entry_is_resolved_in_the_working_directory(tmp_path):
    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    policy = ShellPolicy(allow=True, whitelist=("./tool",))
    assert decide_spawn(policy, str(tool), [], tmp_path).argv == (str(tool),)
    assert refusal(lambda: decide_spawn(policy, str(tool), [], CWD)) == (
        "shell.whitelist",
        f"shell: program '{tool}' is not in the whitelist ({str(tool)!r})",
    )


WRAPPERS = ShellPolicy(
    allow=True, whitelist=("env", "nice", "timeout", "stdbuf", "setsid", "xargs", "echo", "nohup", "find")
)


@pytest.mark.parametrize(
    "command",
    [
        "env -- rm x",
        "env -i -- rm x",
        "env - rm x",
        "env -i - rm x",
        "env - -i rm x",
        "env --unset=FOO rm x",
        "env --unset=A=B rm x",
        "env --unset FOO rm x",
        "env -i --unset FOO rm x",
        "env --chdir /tmp rm x",
        "env --ignore-environment -i rm x",
        "env -uFOO rm x",
        "env -iu FOO rm x",
        "env FOO=1 rm x",
        "nice -5 rm x",
        "nice -n 5 rm x",
        "nice -n 5 -5 rm x",
        "nice -5 -n 3 rm x",
        "nice --adjustment 5 rm x",
        "nice --adjustment=5 rm x",
        "timeout 5 rm x",
        "timeout -s KILL 5 rm x",
        "stdbuf -oL rm x",
        "setsid -w rm x",
        "xargs rm",
        "nohup rm x",
    ],
)
def test_the_program_behind_a_wrapper_s_options_is_found(command):
    """Each wrapper's options (flags, valued ones with their value, long ones with or without
    '=', 'env -', '--', a nice -N) are skipped exactly: the wrapped rm is what is refused."""
    assert refusal(lambda: decide_shell(WRAPPERS, command, CWD)) == (
        "shell.whitelist",
        f"shell: program 'rm' is not in the whitelist ({command!r})",
    )


@pytest.mark.parametrize(
    ("command", "cause"),
    [
        ("env --bogus rm x", "option --bogus of 'env'"),
        ("env --split-string=x rm", "option --split-string of 'env'"),
        ("env -S x rm", "option -S of 'env'"),
        ("env -5 rm x", "option -5 of 'env'"),  # only nice takes -N
        ('env "$X" rm x', "an expansion among the arguments of 'env'"),
        ('timeout "$T" rm x', "an expansion among the arguments of 'timeout'"),
        ('timeout -- "$T" rm x', "an expansion among the arguments of 'timeout'"),  # its duration operand
    ],
)
def test_wrapper_options_that_hide_the_program_are_uncertain(command, cause):
    assert refusal(lambda: decide_shell(WRAPPERS, command, CWD)) == (
        "shell.uncertain",
        f"shell: cannot analyze {cause} with certainty in {command!r}; denied because a whitelist or blacklist is set",
    )


def test_a_lone_dash_is_a_program_for_nice():
    assert refusal(lambda: decide_shell(WRAPPERS, "nice - rm x", CWD)) == (
        "shell.not-found",
        "shell: program '-' is not found in the safe PATH ('nice - rm x')",
    )
    assert [p.name for p in decide_shell(WRAPPERS, "xargs", CWD).programs] == ["xargs", "echo"]


@pytest.mark.parametrize(
    "args",
    [
        [".", "-okdir", "rm", "{}", ";"],
        [".", "-exec", "echo", "{}", ";", "-exec", "rm", "x", ";"],
        [".", "-exec", "echo", "{}", "+", "-exec", "rm", "x", ";"],
        [".", "-exec", "echo", ";", "-exec", "rm", "x", ";"],
        [".", "-exec", ";", "-exec", "rm", "x", ";"],
    ],
    ids=["okdir", "two-chains", "plus-ends-a-chain", "odd-length-chain", "empty-chain"],
)
def test_every_find_exec_chain_is_analysed(args):
    assert refusal(lambda: decide_spawn(WRAPPERS, "find", args, CWD)) == (
        "shell.whitelist",
        f"shell: program 'rm' is not in the whitelist ({' '.join(['find', *args])!r})",
    )


def test_a_wrapper_without_its_operands_runs_nothing_else():
    assert [p.name for p in decide_shell(WRAPPERS, "timeout", CWD).programs] == ["timeout"]
    assert [p.name for p in decide_shell(WRAPPERS, "timeout 5", CWD).programs] == ["timeout"]
