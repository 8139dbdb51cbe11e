"""The real `hugind` command: output, exit codes, and no tracebacks."""

from __future__ import annotations

import json

import pytest

from hugind.errors import ExitCode
from tests.conftest import REPO


def _no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr


def test_hello_example_prints_its_json_result(cli):
    res = cli("run", str(REPO / "examples" / "hello"), "--", "world")
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout) == {"message": "Hello, world!", "runtime": res_runtime()}
    assert "greeting world" in res.stderr


def res_runtime() -> str:
    from hugind import __version__

    return f"hugind {__version__}"


def test_hello_example_reads_its_declared_env(cli):
    res = cli("run", str(REPO / "examples" / "hello"), "--", "Ada", env={"HELLO_GREETING": "Ahoy"})
    assert json.loads(res.stdout)["message"] == "Ahoy, Ada!"


@pytest.mark.parametrize(
    ("files", "manifest_extra", "code", "fragment"),
    [
        (
            {"main.js": "export default () => { throw new Error('kaput'); }"},
            {},
            ExitCode.AGENT_FAILED,
            "Error: kaput",
        ),
        ({"main.js": "export default ( => 1"}, {}, ExitCode.USAGE, "main.js:1:18: SyntaxError"),
        ({"main.js": "export default 1"}, {"colour": "blue"}, ExitCode.USAGE, "unknown key 'colour'"),
        (
            {"main.js": "export default 1"},
            {"env": [{"name": "NEEDED_TOKEN", "required": True}]},
            ExitCode.USAGE,
            "NEEDED_TOKEN",
        ),
        ({"main.js": "export default () => { while (true) {} }"}, {}, ExitCode.LIMIT_EXCEEDED, "deadline"),
    ],
)
def test_exit_codes(make_agent, cli, files, manifest_extra, code, fragment):
    agent = make_agent(files, **manifest_extra)
    res = cli("run", str(agent), "--timeout", "1")
    assert res.code == code, res.stderr
    assert fragment in res.stderr
    assert res.stderr.startswith("hugind: error:")
    _no_traceback(res.stderr)


def test_missing_agent_path_is_a_usage_error(cli, tmp_path):
    res = cli("run", str(tmp_path / "nope"))
    assert res.code == ExitCode.USAGE
    assert "no such agent" in res.stderr
    _no_traceback(res.stderr)


def test_invalid_yaml_names_the_line(cli, tmp_path):
    (tmp_path / "main.js").write_text("export default 1")
    (tmp_path / "agent.yaml").write_text("name: x\nentry_point: main.js\npermissions: [unclosed\n")
    res = cli("run", str(tmp_path))
    assert res.code == ExitCode.USAGE
    assert "agent.yaml" in res.stderr and "line" in res.stderr
    _no_traceback(res.stderr)


def test_single_file_agent_runs_with_deny_everything_policy(cli, tmp_path):
    script = tmp_path / "solo.js"
    script.write_text(
        """
        export default async function () {
          const denied = [];
          try { fs.read_text("solo.js"); } catch (e) { denied.push(e.name); }
          try { await run_command("true"); } catch (e) { denied.push(e.name); }
          try { await http_get("http://127.0.0.1:9/"); } catch (e) { denied.push(e.name); }
          return denied;
        }
        """
    )
    res = cli("run", str(script))
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout) == ["PermissionDenied"] * 3


def test_version_command(cli):
    from hugind import __version__

    res = cli("version")
    assert (res.code, res.stdout.strip()) == (0, __version__)


def test_check_prints_the_effective_policy_in_words_and_json(make_agent, cli):
    agent = make_agent(
        {"main.js": "export default 1"},
        runtime_fs_mode="read-only",
        permissions={
            "filesystem": {"read": ["data"]},
            "network": {"allow": True, "allowed_domains": ["api.example.com"]},
            "mcp": {"allow": True, "servers": ["notes"]},
        },
        mcp=[{"name": "notes", "command": "notes-server"}, {"name": "other", "command": "other-server"}],
    )
    (agent / "data").mkdir()
    words = cli("check", str(agent))
    assert words.code == 0, words.stderr
    assert "readable: data" in words.stdout
    assert "api.example.com" in words.stdout
    assert "mcp: servers notes, other; allowed: notes" in words.stdout
    doc = json.loads(cli("check", str(agent), "--json", "--strict").stdout)
    assert doc["policy"]["strict"] is True
    assert doc["mcp"] == {
        "servers": ["notes", "other"],
        "allow": True,
        "allowed_servers": ["notes"],
        "allowed_tools": None,
        "timeout": 60.0,
    }


def test_check_rejects_a_misspelt_permission(make_agent, cli):
    agent = make_agent({"main.js": "export default 1"}, permissions={"network": {"alow": True}})
    res = cli("check", str(agent))
    assert res.code == ExitCode.USAGE
    assert "permissions.network.alow" in res.stderr
