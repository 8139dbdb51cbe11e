"""Exit codes a CI script checks (issue 28): --strict, the memory limit, numbers out of range."""

from __future__ import annotations

import pytest

from hugind.errors import ExitCode
from tests.conftest import run_cli

UNCAUGHT = "export default () => fs.read_text('/etc/hostname');\n"
CAUGHT = "export default () => { try { fs.read_text('/etc/hostname'); } catch (e) {} return 'coped'; }\n"
# A denial, then a limit the agent hits: under --strict the denial decides the code.
DENIED_THEN_SPINS = "export default () => { try { fs.read_text('/etc/hostname'); } catch (e) {} for (;;) {} };\n"


def _agent(tmp_path, source: str, extra: str = ""):
    root = tmp_path / "agent"
    root.mkdir(parents=True)
    (root / "main.js").write_text(source)
    (root / "agent.yaml").write_text(f"name: probe\nentry_point: main.js\n{extra}")
    return root


@pytest.mark.parametrize("source", [UNCAUGHT, CAUGHT], ids=["uncaught", "caught"])
def test_strict_exits_3_whatever_the_agent_did_with_the_denial(tmp_path, source):
    res = run_cli("run", str(_agent(tmp_path, source)), "--strict")
    assert res.code == ExitCode.POLICY_DENIED, res.stderr
    assert "--strict: the policy denied 1 request during the run" in res.stderr
    if source is UNCAUGHT:  # the agent's own error is still said, first
        first = res.stderr.splitlines()[0]
        assert first.startswith("hugind: error: PermissionDenied: filesystem: read_text '/etc/hostname' denied")
    plain = run_cli("run", str(_agent(tmp_path / "plain", source)))
    assert plain.code == (ExitCode.AGENT_FAILED if source is UNCAUGHT else ExitCode.OK)


def test_strict_denial_wins_over_a_limit_hit_after_it(tmp_path):
    res = run_cli("run", str(_agent(tmp_path, DENIED_THEN_SPINS)), "--strict", "--timeout", "0.5")
    assert res.code == ExitCode.POLICY_DENIED, res.stderr
    assert "wall-clock deadline exceeded" in res.stderr  # the limit is said too


def test_a_strict_record_replays_with_the_same_code(tmp_path):
    agent = _agent(tmp_path, UNCAUGHT)
    record = tmp_path / "run.hgrec"
    assert run_cli("run", str(agent), "--strict", "--record", str(record)).code == ExitCode.POLICY_DENIED
    replayed = run_cli("replay", str(record))
    assert replayed.code == ExitCode.POLICY_DENIED, replayed.stderr  # not "diverged" (8)


def test_the_memory_limit_exits_4_naming_its_key(tmp_path):
    bomb = "export default () => { const a = []; for (;;) a.push('x'.repeat(1 << 20) + a.length); };\n"
    res = run_cli("run", str(_agent(tmp_path, bomb, "permissions:\n  limits:\n    memory_mb: 48\n")))
    assert res.code == ExitCode.LIMIT_EXCEEDED, res.stderr
    assert "permissions.limits.memory_mb" in res.stderr and "out of memory" in res.stderr
    assert res.stderr.startswith("hugind: error: run stopped: memory limit reached")


@pytest.mark.parametrize(
    "argv",
    [
        ["--timeout", "0"],
        ["--timeout", "-5"],
        ["--timeout=-5"],
        ["--timeout", "nan"],
        ["--fuel", "-1"],
        ["--fuel=0"],
    ],
)
def test_a_number_out_of_range_is_a_usage_error_naming_the_flag(tmp_path, argv):
    res = run_cli("run", str(_agent(tmp_path, "export default () => 1;\n")), *argv)
    assert res.code == ExitCode.USAGE, res.stderr
    flag = argv[0].split("=")[0]
    assert f"Invalid value for '{flag}'" in res.stderr
    assert res.stdout == ""


@pytest.mark.parametrize(
    ("command", "flag"),
    [
        (["batch", "AGENT", "-", "--timeout", "0"], "--timeout"),
        (["batch", "AGENT", "-", "-j", "0"], "--concurrency"),
        (["batch", "AGENT", "-", "--fuel", "-3"], "--fuel"),
        (["sessions", "--prune", "-1"], "--prune"),
    ],
)
def test_other_commands_refuse_numbers_out_of_range(tmp_path, command, flag):
    agent = str(_agent(tmp_path, "export default () => 1;\n"))
    res = run_cli(*[agent if word == "AGENT" else word for word in command], stdin="")
    assert res.code == ExitCode.USAGE, res.stderr
    assert f"Invalid value for '{flag}'" in res.stderr


def test_numbers_in_range_still_run(tmp_path):
    res = run_cli("run", str(_agent(tmp_path, "export default () => 1;\n")), "--timeout", "0.5", "--fuel", "100000000")
    assert (res.code, res.stdout) == (0, "1\n"), res.stderr
