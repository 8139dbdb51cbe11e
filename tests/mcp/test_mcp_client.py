"""Agents using real MCP servers (the npm reference servers) through mcp_list_tools / mcp_call_tool."""

from __future__ import annotations

import json
import time

import pytest

from hugind.errors import LimitExceeded, ManifestError
from tests.mcp.conftest import processes_with
from tests.mcp.helpers import audit_entries, plan_agent, run_plan, texts

ALLOW = {"allow": True}


def test_list_tools_of_server_everything(make_agent, everything):
    agent = plan_agent(make_agent, [everything()], ALLOW)
    value, out = run_plan(agent, {"list": True})
    tools = {t["name"]: t for t in value["tools"]}
    assert {"echo", "get-sum", "get-env", "trigger-long-running-operation"} <= set(tools)
    echo = tools["echo"]
    assert set(echo) == {"name", "description", "input_schema", "server"}
    assert echo["server"] == "everything"
    assert echo["description"] == "Echoes back the input string"
    assert echo["input_schema"]["properties"]["message"]["type"] == "string"
    assert out.result.denials == 0


def test_call_echo_from_a_js_agent_and_audit_it(make_agent, everything, tmp_path):
    agent = plan_agent(make_agent, [everything()], ALLOW)
    audit = tmp_path / "audit.jsonl"
    plan = {"calls": [["echo", {"message": "hello"}], ["everything:get-sum", {"a": 2, "b": 40}]]}
    value, _ = run_plan(agent, plan, audit_path=audit)
    echo, total = (c["ok"] for c in value["calls"])
    assert echo == {"content": [{"type": "text", "text": "Echo: hello"}], "is_error": False}
    assert texts(total) == ["The sum of 2 and 40 is 42."]
    entries = audit_entries(audit)
    assert [(e["request"]["tool"], e["decision"], e["rule"]) for e in entries] == [
        ("echo", "allow", "mcp.allow"),
        ("get-sum", "allow", "mcp.allow"),
    ]


def test_structured_content_is_returned(make_agent, everything):
    agent = plan_agent(make_agent, [everything()], ALLOW)
    value, _ = run_plan(agent, {"calls": [["get-structured-content", {"location": "Chicago"}]]})
    result = value["calls"][0]["ok"]
    assert result["structured_content"] == {
        "temperature": 36,
        "conditions": "Light rain / drizzle",
        "humidity": 82,
    }


def test_tool_error_is_a_result_with_is_error(make_agent, everything):
    agent = plan_agent(make_agent, [everything()], ALLOW)
    value, _ = run_plan(agent, {"calls": [["get-sum", {"a": "not a number"}]]})
    result = value["calls"][0]["ok"]
    assert result["is_error"] is True
    assert "expected number" in texts(result)[0]


def test_unknown_tool_and_unknown_server_are_not_found_with_the_known_names(make_agent, everything):
    agent = plan_agent(make_agent, [everything()], ALLOW)
    value, _ = run_plan(agent, {"calls": [["no-such-tool", {}], ["nowhere:echo", {}]]})
    tool, server = value["calls"]
    assert tool["kind"] == "NotFound"
    assert "server 'everything' has no tool 'no-such-tool'" in tool["message"]
    assert "echo" in tool["message"] and "get-sum" in tool["message"]
    assert server["kind"] == "NotFound"
    assert server["message"] == "mcp: unknown MCP server 'nowhere' (servers: everything)"


def test_names_with_several_servers(make_agent, everything, filesystem, tmp_path):
    servers = [everything("a"), everything("b"), filesystem(tmp_path)]
    agent = plan_agent(make_agent, servers, ALLOW)
    plan = {"calls": [["b:echo", {"message": "x"}], ["echo", {"message": "y"}], ["list_allowed_directories", {}]]}
    value, _ = run_plan(agent, plan)
    qualified, ambiguous, unique = value["calls"]
    assert texts(qualified["ok"]) == ["Echo: x"]
    assert ambiguous["kind"] == "InvalidArgument"
    assert "a:echo, b:echo" in ambiguous["message"]
    assert str(tmp_path.resolve()) in texts(unique["ok"])[0]


def test_parallel_calls_from_promise_all(make_agent, everything):
    agent = plan_agent(make_agent, [everything()], ALLOW)
    calls = [["echo", {"message": str(i)}] for i in range(6)]
    value, _ = run_plan(agent, {"calls": calls, "parallel": True})
    assert [texts(c["ok"])[0] for c in value["calls"]] == [f"Echo: {i}" for i in range(6)]


def test_a_slow_tool_times_out_and_the_server_stays_usable(make_agent, everything):
    agent = plan_agent(make_agent, [everything()], {"allow": True, "timeout": 2})
    slow = ["trigger-long-running-operation", {"duration": 60, "steps": 1}]
    started = time.monotonic()
    value, _ = run_plan(agent, {"list": True, "calls": [slow, ["echo", {"message": "still here"}]]})
    elapsed = time.monotonic() - started
    timeout, after = value["calls"]
    assert timeout["kind"] == "Timeout"
    assert timeout["message"] == "mcp: everything:trigger-long-running-operation did not finish within 2 s"
    assert texts(after["ok"]) == ["Echo: still here"]
    assert elapsed < 30  # nowhere near the operation's 60 s


def test_the_run_deadline_bounds_a_call(make_agent, everything):
    limits = {"limits": {"timeout": 4}}
    agent = plan_agent(make_agent, [everything()], ALLOW, permissions={"mcp": ALLOW, **limits})
    started = time.monotonic()
    with pytest.raises(LimitExceeded):
        run_plan(agent, {"calls": [["trigger-long-running-operation", {"duration": 60}]]})
    assert time.monotonic() - started < 20  # the run's 4 s, not the call's 60 s


def test_a_server_that_fails_to_start_names_command_and_stderr(make_agent, tmp_path):
    import shutil

    node = shutil.which("node") or pytest.skip("Node.js is not installed")
    crash = "console.error('fatal: no config file at /etc/example.conf'); process.exit(3)"
    agent = plan_agent(make_agent, [{"name": "broken", "command": node, "args": ["-e", crash]}], ALLOW)
    value, _ = run_plan(agent, {"calls": [["anything", {}], ["anything", {}]]})
    first, second = value["calls"]
    assert first["kind"] == "IOError"
    message = first["message"]
    assert message.startswith(f"mcp: server 'broken' ({node} -e console.error(")
    assert "failed to start: it exited with status 3" in message
    assert "fatal: no config file at /etc/example.conf" in message
    assert second == first  # remembered, not retried


def test_a_missing_command_is_reported(make_agent):
    agent = plan_agent(make_agent, [{"name": "ghost", "command": "no-such-mcp-server-xyz"}], ALLOW)
    value, _ = run_plan(agent, {"list": True})
    assert value["list_error"] == {
        "kind": "IOError",
        "message": "mcp: cannot start server 'ghost': command 'no-such-mcp-server-xyz' not found on PATH",
    }


def test_the_child_gets_only_the_named_environment(make_agent, everything):
    env = {"GREETING": "literal", "TOKEN": "tok-${HUGIND_TEST_TOKEN}-end"}
    agent = plan_agent(make_agent, [everything(env=env)], ALLOW)
    host = {"HUGIND_TEST_TOKEN": "s3cret", "HOME": "/root", "AWS_SECRET_ACCESS_KEY": "nope"}
    value, _ = run_plan(agent, {"calls": [["get-env", {}]]}, env=host)
    seen = json.loads(texts(value["calls"][0]["ok"])[0])
    seen.pop("PWD", None)  # bubblewrap always names the working directory
    assert seen == {"GREETING": "literal", "TOKEN": "tok-s3cret-end"}


def test_a_missing_host_variable_fails_the_start_clearly(make_agent, everything):
    agent = plan_agent(make_agent, [everything(env={"KEY": "${HUGIND_TEST_UNSET_VAR}"})], ALLOW)
    value, _ = run_plan(agent, {"calls": [["echo", {"message": "x"}]]}, env={})
    assert value["calls"][0] == {
        "kind": "IOError",
        "message": "mcp: cannot start server 'everything': mcp.everything.env.KEY refers to "
        "${HUGIND_TEST_UNSET_VAR}, which is not set on the host",
    }


def test_server_filesystem_under_a_tmp_dir(make_agent, filesystem, tmp_path):
    root = tmp_path / "shared"
    root.mkdir()
    (root / "notes.txt").write_text("first line\n")
    agent = plan_agent(make_agent, [filesystem(root)], {"allow": True, "tools": ["files:*"]}, write=(root,))
    real = root.resolve()
    plan = {
        "calls": [
            ["write_file", {"path": str(real / "out.txt"), "content": "written by an agent"}],
            ["read_text_file", {"path": str(real / "notes.txt")}],
            ["list_directory", {"path": str(real)}],
            ["read_text_file", {"path": "/etc/hostname"}],
        ]
    }
    value, _ = run_plan(agent, plan)
    wrote, read, listing, outside = (c["ok"] for c in value["calls"])
    assert not wrote["is_error"]
    assert (root / "out.txt").read_text() == "written by an agent"
    assert texts(read) == ["first line\n"]
    assert "[FILE] notes.txt" in texts(listing)[0] and "[FILE] out.txt" in texts(listing)[0]
    assert outside["is_error"] and "outside allowed directories" in texts(outside)[0]


def test_no_orphan_processes_after_the_run(make_agent, everything, marker):
    import shutil

    sh, node = shutil.which("sh"), shutil.which("node")
    # The server leaves a grandchild behind in its process group: it must die too.
    sleeper = f"{shutil.which('sleep')} 86399.{int(time.time() * 1000) % 10**9}"
    wrapper = f'{sleeper} & exec "$0" "$@"'
    servers = [
        everything("plain", marker=marker),
        {
            "name": "wrapped",
            "command": sh,
            "args": ["-c", wrapper, node, str(everything()["args"][0]), "stdio"],
        },
    ]
    agent = plan_agent(make_agent, servers, ALLOW)
    value, _ = run_plan(agent, {"calls": [["plain:echo", {"message": "1"}], ["wrapped:echo", {"message": "2"}]]})
    assert [texts(c["ok"])[0] for c in value["calls"]] == ["Echo: 1", "Echo: 2"]
    deadline = time.monotonic() + 5
    while (processes_with(marker) or processes_with(sleeper)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(marker) == []
    assert processes_with(sleeper) == []


def test_servers_start_only_when_used(make_agent, everything, marker):
    agent = plan_agent(make_agent, [everything(marker=marker)], ALLOW)
    value, _out = run_plan(agent, {})
    assert value == {"calls": []}
    assert processes_with(marker) == []


def test_malformed_mcp_entries_are_manifest_errors(make_agent, everything):
    from tests.runtime.helpers import run_captured

    bad = [
        ([{"name": "x", "command": "node", "cwd": "/"}], "unknown key mcp[0].cwd"),
        ([{"name": "x"}], "mcp.x.command must be a non-empty string"),
        ([{"name": "x", "command": "n"}, {"name": "x", "command": "n"}], "MCP server 'x' is declared twice"),
        ([{"name": "a b", "command": "n"}], "mcp[0].name 'a b' must be"),
        (
            [{"name": "x", "command": "n", "env": {"K": "${1BAD}"}}],
            "'${1BAD}' is not a valid variable reference",
        ),
        ([{"name": "x", "command": "n", "args": "--flag"}], "mcp.x.args must be a list of strings"),
    ]
    for servers, message in bad:
        agent = plan_agent(make_agent, servers, ALLOW)
        with pytest.raises(ManifestError) as err:
            run_captured(agent, "{}")
        assert message in err.value.message


def test_host_values_never_reach_the_agent_through_the_stderr_tail(make_agent):
    import shutil

    node = shutil.which("node") or pytest.skip("Node.js is not installed")
    leak = "console.error('bad token: ' + process.env.TOKEN); process.exit(1)"
    server = {
        "name": "leaky",
        "command": node,
        "args": ["-e", leak],
        "env": {"TOKEN": "${HUGIND_TEST_SECRET}"},
    }
    agent = plan_agent(make_agent, [server], ALLOW)
    value, _ = run_plan(agent, {"calls": [["x", {}]]}, env={"HUGIND_TEST_SECRET": "sk-very-secret-value"})
    message = value["calls"][0]["message"]
    assert "bad token: <redacted>" in message
    assert "sk-very-secret-value" not in message
