"""Shell attacks by real JS agents: injection, trampolines, PATH tricks, env, runaway children.

Side effects are observable: an attack that got through would create the
file ``pwned`` (or remove ``victim``) in the working directory. Under a
whitelist or blacklist the whole command string is refused before anything
runs, so not even the allowed part (``ls``) executes.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from pathlib import Path

import pytest

from tests.redteam.helpers import alive, assert_denied, group_members, js, read_pids
from tests.support.processes import marker, wait_gone

WHITELIST = ["echo", "ls", "cat", "true", "false"]
SHELL = {"shell": {"allow": True, "whitelist": WHITELIST, "blacklist": ["rm"], "timeout": 10}}


def shell(**keys) -> dict:
    return {"shell": {"allow": True, "timeout": 10, **keys}}


def run(command: str) -> str:
    return f"return await run_command({js(command)}, {{detailed: true}});"


def pwned(root: Path) -> bool:
    return (root / "pwned").exists()


# --- injection under a whitelist ------------------------------------------------------------


INJECTIONS = [
    "ls; touch pwned",
    "ls && touch pwned",
    "false || touch pwned",
    "ls | touch pwned",
    "ls\ntouch pwned",
    "ls & touch pwned",
    "echo $(touch pwned)",
    "echo `touch pwned`",
    'echo "$(touch pwned)"',
    'echo "`touch pwned`"',
    "echo ${X:-$(touch pwned)}",
    "cat <(touch pwned)",
    "(touch pwned)",
    "{ touch pwned; }",
    "if true; then touch pwned; fi",
    "ls >/dev/null; touch pwned",
    "ls #\ntouch pwned",
]


@pytest.mark.parametrize("command", INJECTIONS)
def test_injection_under_a_whitelist_is_denied(attack, command):
    out = attack(run(command), SHELL)
    assert_denied(out, "shell.whitelist", "program 'touch' is not in the whitelist", capability="shell")
    assert not pwned(out.root)


# --- trampolines ------------------------------------------------------------------------------


TRAMPOLINES = [
    ("sh -c 'touch pwned'", "sh"),
    ("bash -c 'touch pwned'", "bash"),
    ("/bin/sh -c 'touch pwned'", "/bin/sh"),
    ("env touch pwned", "env"),
    ("echo pwned | xargs touch", "xargs"),
    ("find . -maxdepth 0 -exec touch pwned ;", "find"),
    ("find . -maxdepth 0 -exec touch pwned \\;", "find"),
    ("awk 'BEGIN{system(\"touch pwned\")}'", "awk"),
    ('python3 -c \'open("pwned", "w")\'', "python3"),
    ("nice touch pwned", "nice"),
    ("timeout 5 touch pwned", "timeout"),
    ("nohup touch pwned", "nohup"),
]


@pytest.mark.parametrize(("command", "tool"), TRAMPOLINES)
def test_trampolines_are_denied_under_a_whitelist(attack, command, tool):
    out = attack(run(command), SHELL)
    assert_denied(out, "shell.trampoline", f"'{tool}' runs other programs")
    assert not pwned(out.root)


LOOKED_THROUGH = [
    ("sh -c 'echo hi; touch pwned'", "sh"),
    ('bash -c "ls && touch pwned"', "bash"),
    ("env -i A=1 touch pwned", "env"),
    ("echo pwned | xargs -n 1 touch", "xargs"),
    ("find . -maxdepth 0 -exec touch pwned ;", "find"),
    ("sh -c \"sh -c 'touch pwned'\"", "sh"),
]


@pytest.mark.parametrize(("command", "extra"), LOOKED_THROUGH)
def test_listed_trampolines_are_looked_through(attack, command, extra):
    out = attack(run(command), shell(whitelist=[*WHITELIST, extra]))
    assert_denied(out, "shell.whitelist", "program 'touch' is not in the whitelist")
    assert not pwned(out.root)


# Each vector above, run with no list and a writable root, does create ``pwned``: its absence
# under the whitelist is the refusal, not a command that could not have worked here.
WRITABLE_ROOT = {"filesystem": {"read": ["."], "write": ["."]}}


# dash (/bin/sh) has no process substitution: that text runs touch under bash only. Its
# proof waits for the substitution (``wait $!``): where the view has no /dev/fd (launcher
# mode), cat fails at once, bash exits and the worker ends the rest, sometimes before touch ran.
BASH_ONLY = {"cat <(touch pwned)"}
# The shell takes the bare ';' as its own separator, so find never gets its terminator: no
# shell runs this, and it stays a case for the analysis (the escaped form is the attack).
INERT = {"find . -maxdepth 0 -exec touch pwned ;"}


@pytest.mark.parametrize(
    "command", dict.fromkeys([*INJECTIONS, *(c for c, _ in TRAMPOLINES), *(c for c, _ in LOOKED_THROUGH)])
)
def test_every_vector_works_without_a_list(attack, agent_dir, command):
    root = agent_dir()
    text = f"bash -c {shlex.quote(command + '; wait $!')}" if command in BASH_ONLY else command
    out = attack(run(text), {**shell(), **WRITABLE_ROOT}, root=root)
    assert out.value["ok"] is True, out.value
    if command in INERT:
        assert not pwned(root) and "missing argument to `-exec'" in out.value["value"]["stderr"], out.value
    else:
        assert pwned(root), (command, out.value["value"])


def test_spawn_is_checked_like_run(attack):
    body = """
    const r = [];
    const tries = [['touch', ['pwned']], ['sh', ['-c', 'touch pwned']], ['/usr/bin/env', ['touch', 'pwned']]];
    for (const [p, a] of tries) {
      try { r.push(await spawn(p, a, {detailed: true})); } catch (e) { r.push(e.name + ': ' + e.message); }
    }
    return r;
    """
    out = attack(body, SHELL)
    first, second, third = out.value["value"]
    assert first.startswith("PermissionDenied: ") and "program 'touch' is not in the whitelist" in first
    assert "'sh' runs other programs" in second and "'/usr/bin/env' runs other programs" in third
    assert [e["rule"] for e in out.denied] == ["shell.whitelist", "shell.trampoline", "shell.trampoline"]
    assert not pwned(out.root)


# --- program lookup tricks ------------------------------------------------------------------


def _evil_ls(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    fake = directory / "ls"
    fake.write_text("#!/bin/sh\ntouch pwned\n")
    fake.chmod(0o755)
    return fake


def test_dot_slash_program_in_working_dir_is_refused(attack, agent_dir):
    root = agent_dir()
    _evil_ls(root)
    out = attack(run("./ls"), SHELL, root=root)
    assert_denied(out, "shell.relative-path", "program './ls' is a relative path")
    out = attack("return await spawn('./ls', [], {detailed: true});", SHELL, root=root)
    assert_denied(out, "shell.relative-path", "program './ls' is a relative path")
    assert not pwned(root)


def test_absolute_path_to_a_fake_ls_is_not_the_whitelisted_ls(attack, tmp_path):
    fake = _evil_ls(tmp_path / "evil")
    out = attack(run(str(fake)), SHELL)
    assert_denied(out, "shell.whitelist", f"program '{fake}' is not in the whitelist")
    assert not pwned(out.root)


@pytest.mark.parametrize(
    ("command", "rule", "fragment"),
    [
        ("PATH={evil} ls", "shell.env", "changing PATH"),
        ("PATH={evil}; ls", "shell.env", "changing PATH"),
        ("export PATH={evil}; ls", "shell.env", "changing PATH"),
        ("cd {evil} && ./ls", "shell.relative-path", "relative path"),
        ("{evil}/../evil/ls", "shell.whitelist", "is not in the whitelist"),
    ],
    ids=["assign", "assign-then-run", "export", "cd-dot-slash", "dotdot-abs"],
)
def test_path_tricks_are_refused(attack, tmp_path, command, rule, fragment):
    _evil_ls(tmp_path / "evil")
    out = attack(run(command.format(evil=tmp_path / "evil")), shell(whitelist=[*WHITELIST, "cd", "export"]))
    assert_denied(out, rule, fragment)
    assert not pwned(out.root) and not (tmp_path / "evil" / "pwned").exists()


# --- blacklist evasion -----------------------------------------------------------------------


EVASIONS = [
    "rm victim",
    "/bin/rm victim",
    "/usr/bin/../bin/rm victim",
    "'r'm victim",
    '"rm" victim',
    "\\rm victim",
    "r\\m victim",
    "command rm victim",
    "exec rm victim",
    "env rm victim",
    "echo victim | xargs rm",
    "sh -c 'rm victim'",
    "eval 'ls; rm victim'",
    "find . -name victim -exec rm {{}} ;",
    "find . -name victim -exec rm {{}} \\;",
    "./myrm victim",
    "{link} victim",
]


@pytest.mark.parametrize("command", EVASIONS)
def test_blacklist_evasion_is_caught(attack, agent_dir, tmp_path, command):
    root = agent_dir()
    (root / "victim").write_text("keep me")
    os.symlink("/bin/rm", root / "myrm")
    os.symlink("/bin/rm", tmp_path / "innocent")
    out = attack(run(command.format(link=tmp_path / "innocent")), shell(blacklist=["rm"]), root=root)
    # A link to rm is caught by its resolved file; the message then names the link as given.
    fragment = "matches blacklist entry" if "myrm" in command or "{link}" in command else "blacklist entry 'rm'"
    assert_denied(out, "shell.blacklist", fragment)
    assert (root / "victim").read_text() == "keep me"


INERT_EVASIONS = {"find . -name victim -exec rm {{}} ;"}  # the bare ';' again (see INERT)


@pytest.mark.parametrize("command", EVASIONS)
def test_every_evasion_removes_the_victim_without_a_list(attack, agent_dir, tmp_path, command):
    """The control of the test above: with no blacklist each spelling really runs rm."""
    root = agent_dir()
    (root / "victim").write_text("keep me")
    os.symlink("/bin/rm", root / "myrm")
    outside = tmp_path / "outside"  # not tmp_path itself: the run's audit file lives there
    outside.mkdir()
    os.symlink("/bin/rm", outside / "innocent")
    # The outside link is seen where the run may read it.
    files = {"filesystem": {"read": [".", str(outside)], "write": ["."]}}
    out = attack(run(command.format(link=outside / "innocent")), {**shell(), **files}, root=root)
    assert out.value["ok"] is True, out.value
    if command in INERT_EVASIONS:
        assert (root / "victim").exists() and "missing argument to `-exec'" in out.value["value"]["stderr"]
    else:
        assert not (root / "victim").exists(), (command, out.value["value"])


# --- the child's environment ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("LD_PRELOAD=/tmp/evil.so ls", "LD_PRELOAD"),
        ("LD_LIBRARY_PATH=/tmp ls", "LD_LIBRARY_PATH"),
        ("BASH_ENV=/tmp/evil.sh ls", "BASH_ENV"),
        ("export LD_PRELOAD=/tmp/evil.so; ls", "LD_PRELOAD"),
        ("env LD_PRELOAD=/tmp/evil.so ls", "LD_PRELOAD"),
        ("PYTHONSTARTUP=/tmp/evil.py ls", "PYTHONSTARTUP"),
        ("IFS=/ ls", "IFS"),
    ],
)
def test_dangerous_env_assignments_are_refused(attack, command, name):
    out = attack(run(command), shell(whitelist=[*WHITELIST, "env", "export"]))
    assert_denied(out, "shell.env", f"setting {name} is not allowed")


def test_env_assignment_through_spawned_env_is_refused(attack):
    out = attack(
        "return await spawn('env', ['LD_PRELOAD=/tmp/evil.so', 'ls'], {detailed: true});",
        shell(whitelist=["env", "ls"]),
    )
    assert_denied(out, "shell.env", "setting LD_PRELOAD is not allowed")


def test_env_clear_hides_host_secrets_from_children(attack, monkeypatch):
    monkeypatch.setenv("HUGIND_REDTEAM_SECRET", "s3cr3t-host-value")
    body = """
    const a = await run_command('env', {detailed: true});
    const b = await run_command('echo "[$HUGIND_REDTEAM_SECRET]"', {detailed: true});
    return [a.stdout, b.stdout];
    """
    out = attack(body, shell())  # env_clear defaults to true
    env_out, echoed = out.value["value"]
    assert "s3cr3t-host-value" not in json.dumps(out.value)
    assert echoed == "[]\n"
    names = {line.split("=", 1)[0] for line in env_out.splitlines()}
    assert names <= {"PATH", "HOME", "LANG", "PWD", "SHLVL", "_", "OLDPWD"}, names


def test_without_env_clear_loader_hooks_are_still_stripped(attack):
    host = {
        "LD_PRELOAD": "/nonexistent/redteam-evil.so",
        "BASH_ENV": "/nonexistent/redteam-evil.sh",
        "PYTHONPATH": "/nonexistent/redteam",
        "HUGIND_REDTEAM_VISIBLE": "yes",
        "HUGIND_REDTEAM_UNDECLARED": "no",
    }
    declared = ["HUGIND_REDTEAM_VISIBLE", "LD_PRELOAD", "BASH_ENV", "PYTHONPATH"]
    body = "return (await run_command('env', {detailed: true})).stdout;"
    out = attack(body, shell(env_clear=False), manifest={"env": declared}, env=host)
    text = out.value["value"]
    assert "HUGIND_REDTEAM_VISIBLE=yes" in text  # the declared env really is passed...
    assert "HUGIND_REDTEAM_UNDECLARED" not in text  # ...never the rest of the host's...
    assert "redteam-evil" not in text and "/nonexistent/redteam" not in text  # ...and never the hooks
    assert "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" in text


# --- runaway children -------------------------------------------------------------------------


def test_timeout_kills_a_child_that_traps_sigterm(attack):
    mark = marker()
    command = f"trap '' TERM; sleep {mark} & wait; wait; wait"
    started = time.monotonic()
    out = attack(run(command), shell(timeout=1))
    elapsed = time.monotonic() - started
    result = out.value["value"]
    # 137: SIGKILL after SIGTERM was ignored; 143: bubblewrap ends the whole sandbox on SIGTERM.
    assert result["timed_out"] is True and result["exit_code"] in (137, 143)
    assert elapsed < 8
    assert wait_gone(mark) == []


def test_background_leftovers_are_killed_when_the_command_ends(attack):
    mark = marker()
    out = attack(run(f"sleep {mark} & echo started"), shell())
    assert out.value["value"]["stdout"] == "started\n"
    assert wait_gone(mark) == []


def test_run_deadline_bounds_a_shell_call_and_kills_it(attack, agent_dir):
    from hugind.errors import LimitExceeded

    root = agent_dir()
    mark = marker()
    started = time.monotonic()
    with pytest.raises(LimitExceeded, match="wall-clock deadline"):
        attack(run(f"exec sleep {mark}"), {**shell(timeout=60), "limits": {"timeout": 1}}, root=root)
    assert time.monotonic() - started < 8
    assert wait_gone(mark) == []


@pytest.mark.parametrize(
    ("command", "whitelist"),
    [
        ("yes", ["yes"]),
        ("echo $$ > pgid; yes | cat", ["yes", "cat", "echo"]),
        ("yes | cat | cat", ["yes", "cat"]),
    ],
    ids=["yes", "yes-piped", "yes-double-pipe"],
)
def test_output_flood_is_capped_and_the_group_killed(attack, command, whitelist):
    started = time.monotonic()
    out = attack(run(command), shell(whitelist=whitelist, max_output=65536))
    result = out.value["value"]
    assert result["truncated"] is True and result["timed_out"] is False
    assert len(result["stdout"]) + len(result["stderr"]) == 65536
    assert time.monotonic() - started < 8
    if (out.root / "pgid").exists():
        (pgid,) = read_pids(out.root / "pgid")
        end = time.monotonic() + 3
        while group_members(pgid) and time.monotonic() < end:
            time.sleep(0.05)
        assert group_members(pgid) == []


def test_stderr_flood_counts_against_the_same_cap(attack):
    out = attack(run("yes 1>&2"), shell(whitelist=["yes"], max_output=10000))
    result = out.value["value"]
    assert result["truncated"] is True and len(result["stderr"]) == 10000 and result["stdout"] == ""


def test_shell_disabled_by_default(attack):
    out = attack(run("touch pwned"), {})
    assert_denied(out, "shell.allow", "permissions.shell.allow is false")
    assert not pwned(out.root)


# --- programs that execute commands but are not on hugind's trampoline list --------------------

# The vector first runs with no list (and a writable root), where it must create ``pwned``: proof
# that this sed/tar really executes the command, so that its absence under ``[sed]``/``[tar]``
# means the refusal, whose rule and reason are then asserted.


@pytest.mark.parametrize(
    ("command", "tool", "fragment"),
    [
        ("sed -n '1e touch pwned' notes.txt", "sed", "sed without --sandbox (its 'e' command runs programs)"),
        ("sed 's/line/touch pwned/e' notes.txt", "sed", "sed without --sandbox (its 'e' command runs programs)"),
        (
            "tar -cf /dev/null notes.txt --checkpoint=1 '--checkpoint-action=exec=touch pwned'",
            "tar",
            "'tar --checkpoint-action=exec=touch pwned', which runs a program",
        ),
    ],
    ids=["sed-e-command", "sed-s-e-flag", "tar-checkpoint-action"],
)
def test_an_option_that_executes_cannot_run_an_unlisted_program(attack, agent_dir, command, tool, fragment):
    root = agent_dir()
    (root / "notes.txt").write_text("line\n")
    control = attack(run(command), {**shell(), **WRITABLE_ROOT}, root=root)
    assert control.value["ok"] is True and control.value["value"]["exit_code"] == 0, control.value
    assert pwned(root), f"{command!r} did not run its command here: the attack below would prove nothing"
    (root / "pwned").unlink()
    out = attack(run(command), {**shell(whitelist=[tool]), **WRITABLE_ROOT}, root=root)
    assert_denied(out, "shell.uncertain", fragment, capability="shell")
    assert not pwned(root)


def test_alive_helper_sees_a_live_process():
    """Guard for the process assertions above: ``alive`` must not always say no."""
    assert alive(os.getpid())
