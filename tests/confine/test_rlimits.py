"""Every child gets exactly the policy's rlimits, from hugind's one table (confine/limits.py):
a sandbox per command (bubblewrap's ``/bin/sh`` step or limits.py, the launcher) and the
zygote's workers, in both modes; and the shell step leaves the environment as planned."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hugind.confine import shell_limits
from hugind.confine.command import LIMITS, confined
from hugind.confine.limits import RLIMITS, capped
from hugind.confine.plan import Rlimits, child_view, plan_child
from hugind.confine.probe import capabilities
from hugind.confine.zygotes import Zygote
from hugind.policy import PolicyEngine, build_policy

# Each row of the table, soft and hard.
REPORT = "import resource; print(repr({}))".format(
    "{" + ", ".join(f"{name!r}: resource.getrlimit({row[0]})" for name, row in RLIMITS.items()) + "}"
)
ODD = Rlimits(processes=91, file_size=5 << 20, cpu_seconds=33, data_bytes=700 << 20, open_files=77)


@pytest.fixture
def engine(tmp_path: Path, mode: str):
    policy = build_policy({"shell": {"allow": True}}, runtime_fs_mode=None, agent_root=tmp_path)
    engine = PolicyEngine(policy)
    yield engine
    engine.close()


def _expected(plan) -> dict[str, tuple[int, int]]:
    return {name: (value, value) for name, value in capped(plan.rlimits.as_dict()).items()}


def _environ(plan) -> list[str]:
    """The entries of the planned environment (dash hands them on in its own order)."""
    return sorted(f"{k}={v}" for k, v in plan.env.items())


def _entries(environ: str) -> list[str]:
    return sorted(e for e in environ.split("\0") if e)


def _python() -> str:
    found = shutil.which("python3", path="/usr/bin:/bin")
    if found is None:
        pytest.skip("no system python3 inside the view")
    return found


def _both(plan) -> tuple[list[str], dict, list[str]]:
    """The argv that set the limits, the limits a Python started there reads, and the
    environment ``env -0`` started the same way prints (Python itself may add LC_CTYPE)."""
    caps = capabilities()
    argv, out = _alone(plan, caps)
    _, env_out = _alone(type(plan)(**{**plan.__dict__, "argv": ("/usr/bin/env", "-0")}), caps)
    return argv, ast.literal_eval(out.strip()), _entries(env_out)


def _alone(plan, caps) -> tuple[list[str], str]:
    launch = confined(plan, caps)
    try:
        proc = subprocess.run(launch.argv, capture_output=True, text=True, env=launch.env, cwd=plan.cwd, timeout=60)
    finally:
        launch.release()
    assert proc.returncode == 0, proc.stderr
    return launch.argv, proc.stdout


@pytest.mark.parametrize(
    "env",
    [{"PATH": "/usr/bin:/bin", "A": "x y"}, {"PATH": "/usr/bin:/bin", "PWD": "/planned/pwd"}, {}],
    ids=["plain", "pwd", "empty"],
)
def test_a_sandbox_per_command_gets_exactly_the_policys_limits(engine, tmp_path, mode, env):
    plan = plan_child(engine, (_python(), "-I", "-S", "-c", REPORT), str(tmp_path), env)
    plan = type(plan)(**{**plan.__dict__, "rlimits": ODD})
    argv, limits, environ = _both(plan)
    assert limits == _expected(plan)
    assert environ == _environ(plan)
    if mode == "bwrap":  # the shell step, not a Python, set them
        assert str(LIMITS) not in argv and argv[argv.index("--", argv.index("--chdir")) + 2] == "-c"


def test_an_environment_the_shell_would_change_takes_limits_py_and_stays_exact(engine, tmp_path, mode):
    env = {"PATH": "/usr/bin:/bin", "IFS": "x", "NOT-A-NAME": "1", "OPTIND": "5"}
    plan = plan_child(engine, (_python(), "-I", "-S", "-c", REPORT), str(tmp_path), env)
    argv, limits, environ = _both(plan)
    assert limits == _expected(plan)
    if mode == "bwrap":
        # The sh step before bwrap (the filter's descriptor, the cgroup) is a dash too: it has
        # already reset these by the time limits.py runs; the inner step only adds no change.
        assert str(LIMITS) in argv
    else:
        assert environ == _environ(plan)


def test_a_limit_the_shell_cannot_say_exactly_takes_limits_py(engine, tmp_path, mode):
    plan = plan_child(engine, (_python(), "-I", "-S", "-c", REPORT), str(tmp_path), {})
    plan = type(plan)(**{**plan.__dict__, "rlimits": Rlimits(file_size=(1 << 20) + 7)})  # not whole 512-byte blocks
    argv, limits, _ = _both(plan)
    assert limits == _expected(plan) and limits["fsize"] == ((1 << 20) + 7,) * 2
    if mode == "bwrap":
        assert str(LIMITS) in argv


def test_the_shell_check_runs_the_shell_and_refuses_another_dialect():
    assert shell_limits.shell_ok(os.path.realpath("/bin/sh")) in (True, False)
    assert shell_limits.script({"fsize": 1000}, False) is None
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash here to stand for a shell of another dialect")
    # bash's -p is the pipe size and it exports SHLVL and _: not trusted, limits.py runs instead.
    assert shell_limits.shell_ok.__wrapped__(os.path.realpath(bash)) is False


def test_the_zygotes_commands_get_exactly_the_policys_limits(engine, tmp_path, mode):
    z = Zygote(child_view(engine, None, str(tmp_path)), capabilities())
    try:
        for rlimits in (Rlimits(), ODD):
            plan = plan_child(engine, (_python(), "-I", "-S", "-c", REPORT), str(tmp_path), {})
            plan = type(plan)(**{**plan.__dict__, "rlimits": rlimits})
            out_r, out_w = os.pipe()
            err_r, err_w = os.pipe()
            try:
                ticket = z.start(plan, out_w, err_w)
            finally:
                os.close(out_w)
                os.close(err_w)
            with os.fdopen(out_r) as out, os.fdopen(err_r) as err:
                stdout, stderr = out.read(), err.read()
            assert ticket.wait(30) and ticket.code == 0, stderr
            assert ast.literal_eval(stdout.strip()) == _expected(plan)
    finally:
        z.close()
