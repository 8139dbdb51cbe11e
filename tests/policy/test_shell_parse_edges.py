"""hugind/policy/shell_parse.py at its edges: ``${...}`` bodies and backquoted commands, the
nesting limits at their boundary, and the exact reason of each refusal.

Written against the survivors of a mutation run (bench/mutation.py policy.shell_parse). Each case
names the commands the parser finds (what the shell policy then checks) and their words as
(text, literal, quoted).
"""

from __future__ import annotations

import pytest

from hugind.policy.shell_parse import MAX_DEPTH, ShellSyntaxError, Uncertain, parse


def commands(source: str) -> list[list[tuple[str, bool, bool]]]:
    return [[(w.text, w.literal, w.quoted) for w in c.words] for c in parse(source)]


def refusal(source: str) -> tuple[str, str]:
    with pytest.raises((Uncertain, ShellSyntaxError)) as refused:
        parse(source)
    return type(refused.value).__name__, str(refused.value)


def braces(depth: int, inner: str = "$(id)") -> str:
    for _ in range(depth):
        inner = "${x:-" + inner + "}"
    return inner


def dollars(depth: int) -> str:
    return "$(" * depth + "id" + ")" * depth


def test_brace_nesting_is_counted_to_its_limit_and_reset_by_each_close():
    assert MAX_DEPTH == 16
    assert commands("echo " + braces(16))[0] == [("id", True, False)]  # found inside 16 levels
    assert refusal("echo " + braces(17)) == ("Uncertain", "'${' nested deeper than 16 levels")
    # A closed ${...} gives its level back: 20 in a row, then 16 deep, are fine; 17 are not.
    assert len(commands("echo " + " ".join(["${a}"] * 20))[0]) == 21
    assert commands("echo ${a} " + braces(16))[0] == [("id", True, False)]
    assert refusal("echo ${a} ${b} " + braces(17)) == ("Uncertain", "'${' nested deeper than 16 levels")


def test_braced_bodies_skip_escapes_and_single_quotes():
    assert commands("echo ${x:-\\'}") == [[("echo", True, False), ("${x:-\\'}", False, False)]]
    # A quoted '}' does not close; two ${...} stay two words; the command after is still found.
    assert commands("echo ${x:-'}'} ${y:-'a'}; id") == [
        [("echo", True, False), ("${x:-'}'}", False, False), ("${y:-'a'}", False, False)],
        [("id", True, False)],
    ]
    assert commands("echo ${x:-$(id)}") == [
        [("id", True, False)],
        [("echo", True, False), ("${x:-$(id)}", False, False)],
    ]
    assert commands('echo "${x:-a}"') == [[("echo", True, False), ("${x:-a}", False, True)]]


@pytest.mark.parametrize(
    ("source", "kind", "reason"),
    [
        ("echo ${x", "ShellSyntaxError", "unterminated '${'"),
        ("echo ${x:-'a}", "ShellSyntaxError", "unterminated single quote"),
        ("echo \"${x:-'a'}\"", "Uncertain", "a single quote inside a double-quoted ${...}"),
        ("echo `id", "ShellSyntaxError", "unterminated backquote"),
        ("echo `a\\", "ShellSyntaxError", "unterminated backquote"),  # a backslash ends the input
        ("echo `x\\`", "ShellSyntaxError", "unterminated backquote"),  # \` is not the closer
    ],
    ids=["brace", "quote-in-brace", "quote-in-double-brace", "backquote", "trailing-backslash", "escaped-closer"],
)
def test_unfinished_or_ambiguous_substitutions_say_why(source, kind, reason):
    assert refusal(source) == (kind, reason)


def test_backslashes_in_backquotes_keep_what_the_shell_keeps():
    # Outside double quotes \" stays \" in the backquoted command: its word is '"a"', literally.
    assert commands('echo `echo \\"a\\"`')[0] == [("echo", True, False), ('"a"', True, True)]
    # Inside double quotes \" is a plain quote: the word is a.
    assert commands('echo "`echo \\"a\\"`"')[0] == [("echo", True, False), ("a", True, True)]
    # A backslash before another character is kept for the inner parse, once.
    assert commands("echo `echo \\ab`")[0] == [("echo", True, False), ("ab", True, True)]
    assert commands("echo `echo \\$x`")[0] == [("echo", True, False), ("$x", False, False)]


def test_a_backquote_is_one_level_of_nesting():
    assert commands("echo " + dollars(16))[0] == [("id", True, False)]
    assert refusal("echo " + dollars(17)) == ("Uncertain", "nesting deeper than 16 levels")
    assert commands("echo `" + dollars(15) + "`")[0] == [("id", True, False)]
    assert refusal("echo `" + dollars(16) + "`") == ("Uncertain", "nesting deeper than 16 levels")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("echo ${x:-''}", [[("echo", True, False), ("${x:-''}", False, False)]]),
        ('echo ${x:-"a}b"}; id', [[("echo", True, False), ('${x:-"a}b"}', False, False)], [("id", True, False)]]),
        ('echo ${x:-"$(id)"}', [[("id", True, False)], [("echo", True, False), ('${x:-"$(id)"}', False, False)]]),
        ("echo ${x:-`id`b}", [[("id", True, False)], [("echo", True, False), ("${x:-`id`b}", False, False)]]),
        # A backquote inside an unquoted ${...} is not in double quotes: \" stays \".
        (
            'echo ${x:-`echo \\"a\\"`}',
            [
                [("echo", True, False), ('"a"', True, True)],
                [("echo", True, False), ('${x:-`echo \\"a\\"`}', False, False)],
            ],
        ),
        # \X is not one of the escapes of a backquote: kept, so the inner word is quoted.
        (
            "echo `echo \\X`",
            [[("echo", True, False), ("X", True, True)], [("echo", True, False), ("`...`", False, False)]],
        ),
        (
            'echo "`echo \\X`"',
            [[("echo", True, False), ("X", True, True)], [("echo", True, False), ("`...`", False, True)]],
        ),
    ],
    ids=[
        "empty-quotes",
        "quoted-brace",
        "subst-in-quotes",
        "backquote",
        "backquote-escape",
        "bq-unknown",
        "dq-bq-unknown",
    ],
)
def test_what_a_braced_body_holds_is_read_as_the_shell_reads_it(source, expected):
    assert commands(source) == expected


def test_a_nested_brace_inherits_the_double_quotes():
    assert refusal("echo \"${x:-${y:-'a'}}\"") == ("Uncertain", "a single quote inside a double-quoted ${...}")
