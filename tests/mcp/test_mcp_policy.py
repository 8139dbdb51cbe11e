"""permissions.mcp: the pure decisions, parsing, presets, and denials seen from a real run (audited)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hugind.errors import ManifestError, PermissionDenied
from hugind.mcp.policy import McpPolicy, audit, parse_mcp_policy, parse_preset_mcp
from hugind.policy import AuditLog, PolicyEngine, build_policy
from hugind.run import strict_verdict
from tests.mcp.conftest import processes_with
from tests.mcp.helpers import audit_entries, plan_agent, run_plan, texts

DECLARED = ["fs", "web"]


def decide(policy: McpPolicy, server: str, tool: str) -> tuple[bool, str]:
    decision = policy.decide_tool(server, tool)
    return decision.allowed, decision.rule


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        (McpPolicy(), {("fs", "read"): (False, "mcp.allow"), ("web", "get"): (False, "mcp.allow")}),
        (McpPolicy(allow=True), {("fs", "read"): (True, "mcp.allow"), ("web", "get"): (True, "mcp.allow")}),
        (
            McpPolicy(allow=True, strict=True),
            {("fs", "read"): (False, "mcp.strict"), ("web", "get"): (False, "mcp.strict")},
        ),
        (
            McpPolicy(allow=True, servers=("fs",), strict=True),
            {("fs", "read"): (True, "mcp.servers"), ("web", "get"): (False, "mcp.servers")},
        ),
        (
            McpPolicy(allow=True, tools=("fs:read", "web:*")),
            {
                ("fs", "read"): (True, "mcp.tools"),
                ("fs", "write"): (False, "mcp.tools"),
                ("web", "x"): (True, "mcp.tools"),
            },
        ),
        (
            McpPolicy(allow=True, servers=("fs",), tools=("fs:read", "web:*")),
            {
                ("fs", "read"): (True, "mcp.tools"),
                ("fs", "write"): (False, "mcp.tools"),
                ("web", "x"): (False, "mcp.servers"),
            },
        ),
        (McpPolicy(allow=False, servers=("fs",)), {("fs", "read"): (False, "mcp.allow")}),
    ],
)
def test_decisions(policy, expected):
    assert {key: decide(policy, *key) for key in expected} == expected


def test_a_tools_list_limits_the_servers_too():
    policy = McpPolicy(allow=True, tools=("fs:read",))
    assert policy.decide_server("fs").allowed
    assert not policy.decide_server("web").allowed
    assert policy.decide_server("web").rule == "mcp.tools"


def test_call_timeout_is_bounded_by_the_run():
    assert McpPolicy(timeout=60).call_timeout(remaining=5) == 5
    assert McpPolicy(timeout=2).call_timeout(remaining=5) == 2


def test_parse_defaults_and_values():
    assert parse_mcp_policy(None, DECLARED) == McpPolicy()
    assert parse_mcp_policy({"mcp": {"allow": True}}, DECLARED, strict=True) == McpPolicy(allow=True, strict=True)
    parsed = parse_mcp_policy(
        {"mcp": {"allow": True, "servers": ["fs"], "tools": ["fs:read", "fs:read"], "timeout": 5}}, DECLARED
    )
    assert parsed == McpPolicy(allow=True, servers=("fs",), tools=("fs:read",), timeout=5.0)


@pytest.mark.parametrize(
    ("mcp", "message"),
    [
        ({"allow": "yes"}, "permissions.mcp.allow: must be true or false"),
        ({"alow": True}, "permissions.mcp.alow: unknown key"),
        ({"servers": ["nope"]}, "permissions.mcp.servers[0]: 'nope' is not a server declared under mcp:"),
        ({"servers": "fs"}, "permissions.mcp.servers: must be a list"),
        ({"tools": ["fs"]}, "permissions.mcp.tools[0]: must be 'server:tool' or 'server:*'"),
        ({"tools": ["other:x"]}, "permissions.mcp.tools[0]: 'other' is not a server declared under mcp:"),
        ({"timeout": 0}, "permissions.mcp.timeout: must be a number of seconds"),
        ({"timeout": True}, "permissions.mcp.timeout: must be a number of seconds"),
        ("all", "permissions.mcp: must be a mapping"),
    ],
)
def test_parse_errors_name_the_key(mcp, message):
    with pytest.raises(ManifestError) as err:
        parse_mcp_policy({"mcp": mcp}, DECLARED)
    assert message in err.value.message


def test_a_preset_only_tightens():
    mine = McpPolicy(allow=True, tools=("fs:*", "web:get"), timeout=60)
    preset = parse_preset_mcp({"permissions": {"mcp": {"tools": ["fs:read"], "timeout": 10}}})
    tight = mine.tightened(preset)
    assert tight == McpPolicy(allow=True, tools=("fs:read",), timeout=10.0)
    assert not McpPolicy(allow=True).tightened(parse_preset_mcp({"permissions": {"mcp": {"allow": False}}})).allow
    assert mine.tightened(parse_preset_mcp({"name": "no-mcp-section"})) == mine
    assert McpPolicy(allow=True).tightened(parse_preset_mcp({"permissions": {"mcp": {"servers": ["fs"]}}})) == (
        McpPolicy(allow=True, servers=("fs",))
    )


def test_audit_records_and_counts_denials_like_the_engine(tmp_path):
    engine = PolicyEngine(build_policy(None, runtime_fs_mode=None, agent_root=tmp_path), AuditLog())
    policy = McpPolicy(allow=True, servers=("fs",))
    audit(engine, {"op": "call_tool", "server": "fs", "tool": "read"}, policy.decide_tool("fs", "read"))
    with pytest.raises(PermissionDenied) as err:
        audit(engine, {"op": "call_tool", "server": "web", "tool": "get"}, policy.decide_tool("web", "get"))
    assert err.value.message == "mcp: server 'web' is not in permissions.mcp.servers"
    assert engine.denials == 1
    assert [(e["capability"], e["op"], e["decision"], e["rule"]) for e in engine.audit.entries] == [
        ("mcp", "call_tool", "allow", "mcp.servers"),
        ("mcp", "call_tool", "deny", "mcp.servers"),
    ]


# --- through a real run --------------------------------------------------------------


def _denied(make_agent, servers, mcp_policy, plan, tmp_path: Path, **options):
    audit_path = tmp_path / "audit.jsonl"
    agent = plan_agent(make_agent, servers, mcp_policy)
    value, out = run_plan(agent, plan, audit_path=audit_path, **options)
    return value, out, audit_entries(audit_path)


def test_default_deny_starts_nothing(make_agent, everything, marker, tmp_path):
    value, out, entries = _denied(
        make_agent, [everything(marker=marker)], None, {"list": True, "calls": [["echo", {}]]}, tmp_path
    )
    assert value["list_error"]["kind"] == "PermissionDenied"
    assert value["calls"][0] == {
        "kind": "PermissionDenied",
        "message": "mcp: MCP servers are not allowed (permissions.mcp.allow is not true)",
    }
    assert [(e["op"], e["decision"], e["rule"]) for e in entries] == [
        ("list_tools", "deny", "mcp.allow"),
        ("call_tool", "deny", "mcp.allow"),
    ]
    assert out.result.denials == 2
    assert processes_with(marker) == []


def test_server_not_allowed(make_agent, everything, tmp_path):
    servers = [everything("a"), everything("b")]
    plan = {"list": True, "calls": [["b:echo", {"message": "x"}], ["a:echo", {"message": "y"}]]}
    value, out, entries = _denied(make_agent, servers, {"allow": True, "servers": ["a"]}, plan, tmp_path)
    assert {t["server"] for t in value["tools"]} == {"a"}
    denied, allowed = value["calls"]
    assert denied == {
        "kind": "PermissionDenied",
        "message": "mcp: server 'b' is not in permissions.mcp.servers",
    }
    assert texts(allowed["ok"]) == ["Echo: y"]
    assert [(e["op"], e["request"].get("server"), e["decision"], e["rule"]) for e in entries] == [
        ("list_tools", None, "allow", "mcp.servers"),
        ("call_tool", "b", "deny", "mcp.servers"),
        ("call_tool", "a", "allow", "mcp.servers"),
    ]
    assert entries[0]["request"]["servers"] == ["a"]
    assert out.result.denials == 1


def test_tool_not_allowed_and_hidden_from_the_listing(make_agent, everything, tmp_path):
    policy = {"allow": True, "tools": ["everything:echo"]}
    plan = {"list": True, "calls": [["get-sum", {"a": 1, "b": 2}], ["echo", {"message": "ok"}]]}
    value, out, entries = _denied(make_agent, [everything()], policy, plan, tmp_path)
    assert [t["name"] for t in value["tools"]] == ["echo"]
    denied, allowed = value["calls"]
    assert denied == {
        "kind": "PermissionDenied",
        "message": "mcp: tool 'everything:get-sum' is not in permissions.mcp.tools",
    }
    assert texts(allowed["ok"]) == ["Echo: ok"]
    assert [(e["op"], e["decision"], e["rule"]) for e in entries] == [
        ("list_tools", "allow", "mcp.tools"),
        ("call_tool", "deny", "mcp.tools"),
        ("call_tool", "allow", "mcp.tools"),
    ]
    assert out.result.denials == 1


def test_strict_requires_explicit_lists(make_agent, everything, tmp_path):
    value, out, entries = _denied(
        make_agent,
        [everything()],
        {"allow": True},
        {"calls": [["echo", {"message": "x"}]]},
        tmp_path,
        strict=True,
    )
    assert value["calls"][0]["kind"] == "PermissionDenied"
    assert "--strict requires permissions.mcp to list" in value["calls"][0]["message"]
    assert [(e["decision"], e["rule"]) for e in entries] == [("deny", "mcp.strict")]
    verdict = strict_verdict(out.result)
    assert verdict is not None and "denied 1 request" in verdict.message


def test_strict_with_explicit_lists_allows(make_agent, everything, tmp_path):
    policy = {"allow": True, "servers": ["everything"], "tools": ["everything:echo"]}
    value, out, entries = _denied(
        make_agent, [everything()], policy, {"calls": [["echo", {"message": "x"}]]}, tmp_path, strict=True
    )
    assert texts(value["calls"][0]["ok"]) == ["Echo: x"]
    assert out.result.denials == 0 and strict_verdict(out.result) is None
    assert [(e["decision"], e["rule"]) for e in entries] == [("allow", "mcp.tools")]


def test_a_preset_file_can_deny_mcp(make_agent, everything, tmp_path):
    preset = tmp_path / "no-mcp.yaml"
    preset.write_text(yaml.safe_dump({"name": "no-mcp", "permissions": {"mcp": {"allow": False}}}))
    value, _out, entries = _denied(
        make_agent, [everything()], {"allow": True}, {"calls": [["echo", {}]]}, tmp_path, policy_file=preset
    )
    assert value["calls"][0]["kind"] == "PermissionDenied"
    assert [(e["decision"], e["rule"]) for e in entries] == [("deny", "mcp.allow")]


def test_bare_names_with_several_servers_are_still_policy_checked(make_agent, everything, tmp_path):
    servers = [everything("a"), everything("b")]
    value, _, entries = _denied(make_agent, servers, None, {"calls": [["echo", {}]]}, tmp_path)
    assert value["calls"][0]["kind"] == "PermissionDenied"
    assert [(e["op"], e["decision"], e["rule"]) for e in entries] == [("call_tool", "deny", "mcp.allow")]
    policy = {"allow": True, "tools": ["a:echo", "b:get-sum"]}
    value, _, _ = _denied(make_agent, servers, policy, {"calls": [["get-env", {}]]}, tmp_path)
    assert value["calls"][0] == {
        "kind": "PermissionDenied",
        "message": "mcp: tool 'a:get-env' is not in permissions.mcp.tools",
    }
    value, _, _ = _denied(make_agent, servers, policy, {"calls": [["get-sum", {"a": 1, "b": 1}]]}, tmp_path)
    assert texts(value["calls"][0]["ok"]) == ["The sum of 1 and 1 is 2."]
