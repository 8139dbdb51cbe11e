"""Shell rules (parser, whitelist, blacklist, trampolines) and shell.run/shell.spawn as real processes."""

from __future__ import annotations

import os
import shutil
import threading
import time

import pytest
from policy_vectors import (
    BLACKLIST_EVASIONS,
    BLACKLIST_POLICY,
    BLACKLIST_UNCERTAIN,
    SHELL_ALLOWED,
    SHELL_DENIED,
    SHELL_POLICY,
)

from hugind.errors import InvalidArgument, NotFound, PermissionDenied, Timeout
from hugind.policy.shell import SAFE_PATH, build_env, is_dangerous_env
from hugind.policy.shell_parse import ShellSyntaxError, Uncertain, parse
from tests.support.processes import marker, wait_gone

SLACK = 4.0  # seconds of tolerance for a loaded 2-core machine


def programs(source: str) -> list[list[str]]:
    return [[w.text for w in cmd.words] for cmd in parse(source)]


# --- the parser ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("ls -l", [["ls", "-l"]]),
        ("a; b && c || d | e & f\ng", [["a"], ["b"], ["c"], ["d"], ["e"], ["f"], ["g"]]),
        ("echo $(id -u) `whoami`", [["id", "-u"], ["whoami"], ["echo", "$(id -u)", "`...`"]]),
        ('echo "x $(id) y"', [["id"], ["echo", "x $(id) y"]]),
        ("'l's \"-\"l", [["ls", "-l"]]),
        ("\\ls", [["ls"]]),
        ("l\\\ns", [["ls"]]),
        ("A=1 B=$(id) ls >out 2>&1 <in", [["id"], ["ls"]]),
        ("ls 2>/dev/null", [["ls"]]),
        ("echo a#b # comment; id", [["echo", "a#b"]]),
        ("if a; then b; elif c; then d; else e; fi", [["a"], ["b"], ["c"], ["d"], ["e"]]),
        ("while a; do b; done", [["a"], ["b"]]),
        ("( a; b ) | { c; }", [["a"], ["b"], ["c"]]),
        ("cat <(a) >(b)", [["a"], ["b"], ["cat", "<(...)", "<(...)"]]),
        ("echo ${x:-$(a)} ${#y}", [["a"], ["echo", "${x:-$(a)}", "${#y}"]]),
        ('echo "`a \\"q\\"`"', [["a", "q"], ["echo", "`...`"]]),
        ("echo \"a'b\" 'c\"d'", [["echo", "a'b", 'c"d']]),
    ],
)
def test_parser_finds_every_command(source, expected):
    assert programs(source) == expected


def test_literal_and_quoted_flags():
    (cmd,) = parse("'ls' $X l* ~/x {a,b} 'a*'")
    flags = [(w.text, w.literal, w.quoted) for w in cmd.words]
    assert flags == [
        ("ls", True, True),
        ("$X", False, False),
        ("l*", False, False),
        ("~/x", False, False),
        ("{a,b}", False, False),
        ("a*", True, True),
    ]


@pytest.mark.parametrize("source", ["'a", '"a', "$(a", "`a", "a )", "a >", "a <"])
def test_parser_syntax_errors(source):
    with pytest.raises(ShellSyntaxError):
        parse(source)


@pytest.mark.parametrize(
    "source",
    [
        "cat <<EOF\nx\nEOF",
        "f() { a; }",
        "for i in 1; do a; done",
        "echo $((1))",
        # dash runs the $(rm) (the quotes are literal there), bash does too: found by tests/fuzz
        "echo \"${X:-'$(rm x)'}\"",
    ],
)
def test_parser_refuses_what_it_does_not_follow(source):
    with pytest.raises(Uncertain):
        parse(source)


def test_bash_locale_quoting_is_not_a_literal_program():
    # bash reads $"rm" as rm, dash as $rm: neither reading may be trusted (found by tests/fuzz)
    (cmd,) = parse('$"rm" x "a$"')
    assert [(w.text, w.literal) for w in cmd.words] == [("$rm", False), ("x", True), ("a$", True)]


def test_parser_limits():
    with pytest.raises(ShellSyntaxError, match="NUL"):
        parse("ls\0rm")
    with pytest.raises(ShellSyntaxError, match="longer than"):
        parse("a" * 70_000)
    with pytest.raises(Uncertain, match="nesting"):
        parse("$(" * 40 + ")" * 40)


# --- whitelist, blacklist, trampolines --------------------------------------------------


@pytest.mark.parametrize(("command", "rule", "fragment"), SHELL_DENIED, ids=[v[0] for v in SHELL_DENIED])
def test_shell_attacks_are_denied(harness, command, rule, fragment):
    h = harness(SHELL_POLICY)
    err = h.fails("shell.run", command=command)
    assert isinstance(err, PermissionDenied)
    assert fragment in err.message
    entry = h.audit[-1]
    assert (entry["capability"], entry["decision"], entry["rule"]) == ("shell", "deny", rule)
    assert entry["request"]["command"] == command


@pytest.mark.parametrize("command", BLACKLIST_EVASIONS)
def test_blacklist_cannot_be_evaded(harness, agent_root, command):
    (agent_root / "x").write_text("keep me")
    h = harness(BLACKLIST_POLICY)
    err = h.fails("shell.run", command=command)
    assert isinstance(err, PermissionDenied)
    assert "matches blacklist entry 'rm'" in err.message
    assert h.audit[-1]["rule"] == "shell.blacklist"
    assert (agent_root / "x").read_text() == "keep me"


# What each evasion does with no blacklist (the attack ran): x removed, or, where rm gets no
# operand from an empty stdin, rm itself complaining; the bare ';' leaves find without its end.
RUNS_RM_WITHOUT_OPERAND = {"xargs rm", "xargs -n 1 rm", "ls | rm"}
FIND_WITHOUT_END = {"find . -name x -exec rm {} ;"}


@pytest.mark.parametrize("command", BLACKLIST_EVASIONS)
def test_every_evasion_runs_rm_without_the_blacklist(harness, agent_root, command):
    (agent_root / "x").write_text("keep me")
    h = harness({"shell": {"allow": True}, "filesystem": {"read": ["."], "write": ["."]}})
    result = h.call("shell.run", command=command)
    if command in RUNS_RM_WITHOUT_OPERAND:
        assert "rm: missing operand" in result["stderr"], result
    elif command in FIND_WITHOUT_END:
        assert "missing argument to `-exec'" in result["stderr"], result
    else:
        assert not (agent_root / "x").exists(), result


@pytest.mark.parametrize("command", BLACKLIST_UNCERTAIN)
def test_blacklist_refuses_what_it_cannot_see(harness, command):
    h = harness(BLACKLIST_POLICY)
    err = h.fails("shell.run", command=command)
    assert "with certainty" in err.message and h.audit[-1]["rule"] == "shell.uncertain"


def test_blacklist_also_applies_to_spawn(harness):
    h = harness(BLACKLIST_POLICY)
    for program, args in [("rm", ["x"]), ("/bin/rm", ["x"]), ("env", ["rm", "x"]), ("sh", ["-c", "rm x"])]:
        err = h.fails("shell.spawn", program=program, args=args)
        assert "matches blacklist entry 'rm'" in err.message
        assert (h.audit[-1]["decision"], h.audit[-1]["rule"]) == ("deny", "shell.blacklist")


def test_blacklist_matches_a_symlink_to_the_binary(harness, agent_root, tmp_path):
    os.symlink(shutil.which("rm", path=SAFE_PATH), tmp_path / "innocent")
    h = harness(BLACKLIST_POLICY)
    err = h.fails("shell.run", command=f"{tmp_path}/innocent x")
    assert "matches blacklist entry" in err.message


@pytest.mark.parametrize(("command", "stdout"), SHELL_ALLOWED, ids=[v[0] for v in SHELL_ALLOWED])
def test_whitelisted_commands_run(harness, command, stdout):
    h = harness(SHELL_POLICY)
    result = h.call("shell.run", command=command)
    assert result["stdout"] == stdout
    assert not result["timed_out"] and not result["truncated"]
    assert h.audit[-1]["decision"] == "allow" and h.audit[-1]["rule"] == "shell.whitelist"


def test_whitelist_matches_resolved_programs_not_names(harness, tmp_path):
    fake = tmp_path / "bin" / "ls"
    fake.parent.mkdir()
    shutil.copy(shutil.which("ls", path=SAFE_PATH), fake)
    h = harness(SHELL_POLICY)
    err = h.fails("shell.run", command=str(fake))
    assert "program '" + str(fake) + "' is not in the whitelist" in err.message
    assert h.call("shell.run", command="/bin/ls /usr")["exit_code"] == 0  # the same binary by path
    err = h.fails("shell.run", command="/tmp/nowhere/ls")
    assert "not found in the safe PATH" in err.message


def test_whitelist_with_an_absolute_path_entry(harness, agent_root):
    tool = agent_root / "tool.sh"
    tool.write_text("#!/bin/sh\necho tool ran\n")
    tool.chmod(0o755)
    h = harness({"shell": {"allow": True, "whitelist": [str(tool)]}})
    assert h.call("shell.run", command=str(tool))["stdout"] == "tool ran\n"
    assert "relative path" in h.fails("shell.run", command="./tool.sh").message


def test_whitelisted_wrappers_still_check_what_they_run(harness):
    h = harness({"shell": {"allow": True, "whitelist": ["env", "echo", "sh", "xargs", "find", "timeout"]}})
    assert h.call("shell.run", command="env echo hi")["stdout"] == "hi\n"
    assert h.call("shell.run", command="sh -c 'echo nested'")["stdout"] == "nested\n"
    assert h.call("shell.run", command="timeout 5 echo t")["stdout"] == "t\n"
    for command, fragment in [
        ("env id", "'id' is not in the whitelist"),
        ("env -u X id", "'id'"),
        ("sh -c 'echo ok; id'", "'id'"),
        ("sh -c \"sh -c 'id'\"", "'id'"),
        ("echo . | xargs id", "'id'"),
        ("find . -exec id ;", "'id'"),
        ("timeout -k 1 5 id", "'id'"),
        ("env LD_PRELOAD=/tmp/evil.so echo", "setting LD_PRELOAD"),
        ("env -S 'id'", "with certainty"),
        ("env --frobnicate id", "with certainty"),
        ("timeout --weird 5 id", "with certainty"),
    ]:
        err = h.fails("shell.run", command=command)
        assert fragment in err.message, (command, err.message)


def test_interpreters_pass_only_when_whitelisted(harness):
    h = harness({"shell": {"allow": True, "whitelist": ["python3"]}})
    assert h.call("shell.run", command="python3 -c 'print(6*7)'")["stdout"] == "42\n"
    assert "trampoline" in h.fails("shell.run", command="perl -e 'print 1'").message


def test_no_lists_allow_anything_but_still_parse(harness):
    h = harness({"shell": {"allow": True}})
    result = h.call("shell.run", command="cat <<EOF\nheredoc\nEOF")
    assert result["stdout"] == "heredoc\n"
    assert h.audit[-1]["request"]["analysis"] == "incomplete"
    assert h.call("shell.run", command="x=3; echo $x")["stdout"] == "3\n"
    assert "unterminated" in h.fails("shell.run", command="echo 'oops").message
    assert "setting LD_PRELOAD" in h.fails("shell.run", command="LD_PRELOAD=/x.so ls").message


def test_shell_disabled_and_strict(harness):
    h = harness(None)
    err = h.fails("shell.run", command="echo hi")
    assert err.message == "shell: disabled (permissions.shell.allow is false)"
    assert h.audit[-1]["rule"] == "shell.allow"
    h = harness({"shell": {"allow": True}}, strict=True)
    err = h.fails("shell.run", command="echo hi")
    assert "--strict requires permissions.shell.whitelist" in err.message
    assert h.audit[-1]["rule"] == "shell.strict"
    assert "--strict requires" in h.fails("shell.spawn", program="echo", args=["x"]).message
    h = harness({"shell": {"allow": True, "whitelist": ["echo"]}}, strict=True)
    assert h.call("shell.run", command="echo strict")["stdout"] == "strict\n"


def test_empty_whitelist_allows_nothing(harness):
    h = harness({"shell": {"allow": True, "whitelist": []}})
    assert "not in the whitelist" in h.fails("shell.run", command="echo hi").message


def test_builtins_need_listing_by_name(harness):
    h = harness({"shell": {"allow": True, "whitelist": ["cd", "pwd", "echo"]}})
    assert h.call("shell.run", command="cd / && pwd")["stdout"] == "/\n"
    assert "'export'" in h.fails("shell.run", command="export X=1; echo $X").message
    h = harness({"shell": {"allow": True, "whitelist": ["export", "echo"]}})
    assert h.call("shell.run", command="export X=1; echo $X")["stdout"] == "1\n"
    assert "setting LD_PRELOAD" in h.fails("shell.run", command="export LD_PRELOAD=/x.so").message
    assert "changing PATH" in h.fails("shell.run", command="export PATH=/tmp").message


# --- spawn -------------------------------------------------------------------------------


def test_spawn_passes_arguments_verbatim(harness):
    h = harness({"shell": {"allow": True, "whitelist": ["echo"]}})
    result = h.call("shell.spawn", program="echo", args=["a;b", "$(id)", "`x`", "|", "&&"])
    assert result["stdout"] == "a;b $(id) `x` | &&\n"
    assert h.audit[-1]["request"]["program"] == "echo"


def test_spawn_denials(harness, agent_root):
    h = harness({"shell": {"allow": True, "whitelist": ["echo", "env"]}})
    assert "'id' is not in the whitelist" in h.fails("shell.spawn", program="id", args=[]).message
    assert "'id'" in h.fails("shell.spawn", program="env", args=["id"]).message
    assert "relative path" in h.fails("shell.spawn", program="./echo", args=[]).message
    assert "not found" in h.fails("shell.spawn", program="no-such-program-x", args=[]).message
    assert isinstance(h.fails("shell.spawn", program="echo", args=[1]), InvalidArgument)
    assert "NUL" in h.fails("shell.spawn", program="echo", args=["a\0b"]).message
    h = harness({"shell": {"allow": True}})
    err = h.fails("shell.spawn", program="no-such-program-x", args=[])
    assert isinstance(err, PermissionDenied) and "not found" in err.message
    assert isinstance(h.fails("shell.spawn", program="cd", args=["/"]), (PermissionDenied, NotFound))


# --- processes ----------------------------------------------------------------------------


def test_exit_code_and_streams(harness):
    h = harness({"shell": {"allow": True}})
    result = h.call("shell.run", command="echo out; echo err >&2; exit 7")
    assert result == {
        "stdout": "out\n",
        "stderr": "err\n",
        "exit_code": 7,
        "timed_out": False,
        "truncated": False,
    }
    assert h.call("shell.run", command="kill -9 $$")["exit_code"] == 137


def test_timeout_kills_a_child_that_ignores_sigterm(harness):
    h = harness({"shell": {"allow": True, "timeout": 1}})
    started = time.monotonic()
    mark = marker()
    result = h.call("shell.run", command=f"trap '' TERM; sleep {mark} & echo $!; wait; echo never")
    elapsed = time.monotonic() - started
    assert result["timed_out"] and "never" not in result["stdout"]
    assert elapsed < 1 + SLACK
    assert wait_gone(mark) == []


def test_spawned_python_ignoring_sigterm_dies(harness):
    h = harness({"shell": {"allow": True, "timeout": 1}})
    code = (
        "import os, signal, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print(os.getpid(), flush=True)\n"
        "time.sleep(60)\n"
    )
    mark = marker()
    started = time.monotonic()
    result = h.call("shell.spawn", program="python3", args=["-c", code, mark])
    assert result["timed_out"] and time.monotonic() - started < 1 + SLACK
    # 137: SIGKILL after the ignored SIGTERM; 143: bubblewrap ends the whole sandbox on SIGTERM.
    assert result["exit_code"] in (137, 143)
    assert wait_gone(mark) == []


def test_background_leftovers_are_killed_when_the_command_ends(harness):
    h = harness({"shell": {"allow": True, "timeout": 30}})
    started = time.monotonic()
    mark = marker()
    result = h.call("shell.run", command=f"sleep {mark} & echo $!")
    assert time.monotonic() - started < SLACK and not result["timed_out"]
    assert wait_gone(mark) == []


def test_a_command_that_closes_its_output_still_finishes_normally(harness):
    h = harness({"shell": {"allow": True, "timeout": 30}})
    result = h.call("shell.run", command="exec >&- 2>&-; sleep 0.5; exit 3")
    assert result["exit_code"] == 3 and not result["timed_out"]


@pytest.mark.parametrize("command", ["yes", "yes >&2", "yes & yes >&2; wait"])
def test_output_flood_is_capped(harness, command):
    h = harness({"shell": {"allow": True, "timeout": 30, "max_output": 10_000}})
    started = time.monotonic()
    result = h.call("shell.run", command=command)
    assert result["truncated"] and not result["timed_out"]
    assert len(result["stdout"]) + len(result["stderr"]) == 10_000
    assert time.monotonic() - started < SLACK


def test_run_deadline_and_cancellation_bound_a_command(harness):
    h = harness({"shell": {"allow": True, "timeout": 60}}, deadline=time.monotonic() + 1)
    started = time.monotonic()
    assert h.call("shell.run", command="sleep 30")["timed_out"]
    assert time.monotonic() - started < 1 + SLACK
    h = harness({"shell": {"allow": True, "timeout": 60}})
    threading.Timer(0.3, h.ctx.cancelled.set).start()
    started = time.monotonic()
    err = h.fails("shell.run", command="sleep 30")
    assert isinstance(err, Timeout) and "cancelled" in err.message
    assert time.monotonic() - started < SLACK
    h = harness({"shell": {"allow": True}}, deadline=time.monotonic() - 1)
    assert "deadline has passed" in h.fails("shell.run", command="echo").message


HOSTILE_ENV = {
    "LD_PRELOAD": "/nonexistent/evil.so",
    "LD_LIBRARY_PATH": "/nonexistent",
    "LD_AUDIT": "/nonexistent/audit.so",
    "BASH_ENV": "/nonexistent/bashenv",
    "ENV": "/nonexistent/env",
    "PYTHONPATH": "/nonexistent",
    "PYTHONSTARTUP": "/nonexistent/s.py",
    "NODE_OPTIONS": "--require /nonexistent/x.js",
    "PERL5OPT": "-Mevil",
    "IFS": "/",
    "PS4": "$(id)",
    "SHELLOPTS": "xtrace",
    "PROMPT_COMMAND": "id",
    "BASH_FUNC_ls%%": "() { id; }",
    "HUGIND_TEST_SECRET": "s3cret-value",
}


def test_env_clear_gives_a_minimal_environment(harness, agent_root, monkeypatch):
    for name, value in HOSTILE_ENV.items():
        monkeypatch.setenv(name, value)
    h = harness({"shell": {"allow": True}})
    result = h.call("shell.spawn", program="env", args=[])
    names = {line.split("=", 1)[0] for line in result["stdout"].splitlines()}
    assert names <= {"PATH", "HOME", "LANG", "PWD"}  # bubblewrap sets PWD to the working dir
    assert f"PATH={SAFE_PATH}" in result["stdout"] and "s3cret" not in result["stdout"]
    assert f"HOME={agent_root}" in result["stdout"]


def test_dangerous_names_are_stripped_even_when_the_env_is_inherited(harness, monkeypatch):
    for name, value in HOSTILE_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PATH", "/nonexistent/bin:" + os.environ["PATH"])
    h = harness({"shell": {"allow": True, "env_clear": False}})
    result = h.call("shell.spawn", program="env", args=[])
    names = {line.split("=", 1)[0] for line in result["stdout"].splitlines()}
    assert names.isdisjoint(set(HOSTILE_ENV) - {"HUGIND_TEST_SECRET"})
    assert "HUGIND_TEST_SECRET" not in names  # the host environment is never inherited
    assert f"PATH={SAFE_PATH}\n" in result["stdout"]
    ran = h.call("shell.run", command="echo ok")
    assert ran["stdout"] == "ok\n" and "ld.so" not in ran["stderr"] and "ERROR" not in ran["stderr"]


def test_env_helpers():
    for name in ("LD_PRELOAD", "LD_ANYTHING", "DYLD_INSERT_LIBRARIES", "BASH_FUNC_x%%", "PYTHONHOME", "IFS"):
        assert is_dangerous_env(name)
    for name in ("HOME", "LANG", "TERM", "MY_VAR"):
        assert not is_dangerous_env(name)
    from hugind.policy.model import ShellPolicy

    env = build_env(ShellPolicy(env_clear=False), {"A": "1", "LD_PRELOAD": "x", "PATH": "/evil"}, "/h")
    assert env == {"HOME": "/h", "LANG": "C.UTF-8", "A": "1", "PATH": SAFE_PATH}


def test_working_dir(harness, agent_root):
    (agent_root / "sub").mkdir()
    h = harness({"shell": {"allow": True}})
    assert h.call("shell.run", command="pwd")["stdout"] == f"{agent_root}\n"
    h = harness({"shell": {"allow": True, "working_dir": "sub"}})
    assert h.call("shell.run", command="pwd")["stdout"] == f"{agent_root / 'sub'}\n"
    h = harness({"shell": {"allow": True}}, mode="scratch")
    assert h.call("shell.run", command="pwd")["stdout"] == f"{h.engine.scratch_dir}\n"


@pytest.mark.parametrize(
    "command",
    [
        "env " * 5000 + "rm",
        "echo ${" * 5000,
        "echo $(" * 5000,
        "(" * 5000,
        'echo "${' * 3000,
        "eval " * 3000 + "rm",
    ],
)
def test_pathological_nesting_is_refused_not_crashed(harness, command):
    h = harness(BLACKLIST_POLICY)
    started = time.monotonic()
    err = h.fails("shell.run", command=command)
    assert isinstance(err, PermissionDenied) and "nest" in err.message
    assert time.monotonic() - started < SLACK
