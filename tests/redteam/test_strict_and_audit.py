"""``--strict`` and ``--audit`` end to end, through the real ``python -m hugind run``.

Strict: any denial fails the run with exit code 3 while the agent's result is
still printed; shell strings need a whitelist; private networks are blocked
whatever the manifest says. Audit: one JSON line per decision (capability,
op, decision, rule) that never carries environment values or credentials.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.redteam.helpers import js, probe_source, write_manifest

SECRET = "s3cr3t-host-only-value"
TOKEN = "tok3n-declared-value"


def agent(root: Path, body: str, permissions: dict, **manifest) -> Path:
    (root / "main.js").write_text(probe_source(body))
    write_manifest(root, permissions, **manifest)
    return root


def result(res) -> dict:
    lines = res.stdout.strip().splitlines()
    assert lines, f"no result on stdout (code {res.code}): {res.stderr}"
    return json.loads(lines[-1])


# --- --strict ----------------------------------------------------------------------------------


def test_strict_denial_exits_3_and_still_prints_the_result(cli, agent_dir):
    root = agent(
        agent_dir(),
        """
    try { fs.read_text('/etc/passwd'); return 'read it'; }
    catch (e) { return {caught: e.name, message: e.message}; }
    """,
        {"filesystem": {"read": ["."]}},
    )
    res = cli("run", str(root), "--strict")
    assert res.code == 3, res.stderr
    value = result(res)["value"]
    assert value["caught"] == "PermissionDenied" and "outside the readable roots" in value["message"]
    assert "--strict: the policy denied 1 request during the run" in res.stderr


def test_strict_counts_a_refusal_made_by_the_capability_after_the_policy_allowed(cli, agent_dir, tmp_path):
    # The path lies in a writable root, so the policy allows it; the fs capability then finds
    # the file is a hard link to a file outside the roots and refuses. CI must see that too.
    root = agent_dir()
    (root / "out").mkdir()
    target = tmp_path / "protected.txt"
    target.write_text("do not touch")
    os.link(target, root / "out" / "link.txt")
    agent(
        root,
        """
    try { fs.write_text('out/link.txt', 'pwned'); return 'wrote'; }
    catch (e) { return {caught: e.name, message: e.message}; }
    """,
        {"filesystem": {"write": ["out"]}},
        runtime_fs_mode="read-write",
    )
    audit = tmp_path / "audit.jsonl"
    res = cli("run", str(root), "--strict", "--audit", str(audit))
    assert res.code == 3, res.stderr
    assert result(res)["value"]["caught"] == "PermissionDenied"
    entries = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(e["decision"], e["rule"]) for e in entries][-2:] == [
        ("allow", "filesystem.write:out"),
        ("deny", "filesystem.host-refusal"),
    ]
    assert target.read_text() == "do not touch"


def test_strict_without_denials_exits_0(cli, agent_dir):
    root = agent_dir()
    (root / "data").mkdir()
    (root / "data" / "a.txt").write_text("fine")
    agent(root, "return fs.read_text('data/a.txt');", {"filesystem": {"read": ["data"]}})
    res = cli("run", str(root), "--strict")
    assert (res.code, result(res)) == (0, {"ok": True, "value": "fine"}), res.stderr
    assert res.stderr == ""


def test_without_strict_the_same_denial_exits_0(cli, agent_dir):
    root = agent(
        agent_dir(),
        "try { fs.read_text('/etc/passwd'); } catch (e) { return e.name; }",
        {"filesystem": {"read": ["."]}},
    )
    res = cli("run", str(root))
    assert (res.code, result(res)) == (0, {"ok": True, "value": "PermissionDenied"})


def test_strict_refuses_shell_without_a_whitelist(cli, agent_dir):
    body = """
    const r = [];
    try { await run_command('touch pwned'); r.push('ran'); } catch (e) { r.push(e.name + ': ' + e.message); }
    try { await spawn('touch', ['pwned2']); r.push('ran'); } catch (e) { r.push(e.name + ': ' + e.message); }
    return r;
    """
    # The agent root is writable, so only the shell policy stands between the command and the file.
    perms = {"shell": {"allow": True, "blacklist": ["rm"], "timeout": 10}, "filesystem": {"write": ["."]}}
    root = agent(agent_dir(), body, perms)
    res = cli("run", str(root), "--strict")
    assert res.code == 3
    run_msg, spawn_msg = result(res)["value"]
    assert run_msg == "PermissionDenied: shell: command refused: --strict requires permissions.shell.whitelist"
    assert spawn_msg == "PermissionDenied: shell: spawn refused: --strict requires permissions.shell.whitelist"
    assert "denied 2 requests" in res.stderr
    assert not (root / "pwned").exists() and not (root / "pwned2").exists()
    control = agent(agent_dir(), body, perms)
    assert (cli("run", str(control)).code, (control / "pwned").exists()) == (
        0,
        True,
    )  # strict made the difference


def test_strict_forces_private_network_blocking(cli, agent_dir, server):
    body = f"return await http_get({js(server.url('/hello'))});"
    perms = {
        "network": {
            "allow": True,
            "block_private_networks": False,
            "allowed_ips": ["0.0.0.0/0"],
            "timeout": 10,
        }
    }
    root = agent(agent_dir(), body, perms)
    res = cli("run", str(root), "--strict")
    assert res.code == 3
    value = result(res)
    assert value["ok"] is False and value["name"] == "PermissionDenied"
    assert "127.0.0.0/8 (loopback)" in value["message"]
    assert server.requests == []
    res = cli("run", str(root))  # control: without --strict the manifest's choice stands
    assert (res.code, result(res)) == (0, {"ok": True, "value": "hello from loopback"})
    assert len(server.requests) == 1


def test_strict_applies_host_lists_and_honours_an_explicit_loopback_entry(cli, agent_dir, server):
    body = f"return await http_get({js(server.url('/hello'))});"
    # No host list: under --strict no host at all, refused before any lookup. The CLI runs in a
    # subprocess, beyond the network guard, so the name is one that resolves to loopback locally
    # (/etc/hosts) should the rule break; any other name is decided in test_net_decisions.py.
    open_net = agent(
        agent_dir(),
        f"return await http_get('http://localhost:{server.port}/hello');",
        {"network": {"allow": True}},
    )
    res = cli("run", str(open_net), "--strict")
    assert res.code == 3
    assert result(res)["message"] == f"network: host localhost port {server.port} is not in allowed_domains"
    assert server.requests == []
    named = agent(agent_dir(), body, {"network": {"allow": True, "allowed_ips": [f"127.0.0.1:{server.port}"]}})
    res = cli("run", str(named), "--strict")
    assert (res.code, result(res)) == (0, {"ok": True, "value": "hello from loopback"})


# --- --audit --------------------------------------------------------------------------------------

AUDITED_BODY = """
const r = [];
const attempt = async (f) => { try { await f(); r.push('allow'); } catch (e) { r.push(e.name); } };
await attempt(() => fs.read_text('data/readme.txt'));
await attempt(() => fs.read_text('/etc/passwd'));
await attempt(() => fs.write_text('data/readme.txt', input.meta.env.API_TOKEN));
await attempt(() => http_get(URL, {Authorization: 'Bearer ' + input.meta.env.API_TOKEN}));
await attempt(() => http_get(UNNAMED, {Cookie: input.meta.env.API_TOKEN}));
await attempt(() => run_command('echo hi'));
await attempt(() => run_command('echo hi; id'));
await attempt(() => spawn('env', []));
await attempt(() => fs.read_text('forged\\n{"decision": "allow", "rule": "x"}'));
return r;
"""


def test_audit_has_one_entry_per_decision_and_no_secrets(cli, agent_dir, server, tmp_path):
    root = agent_dir()
    (root / "data").mkdir()
    (root / "data" / "readme.txt").write_text("public")
    perms = {
        "filesystem": {"read": ["data"]},
        "network": {"allow": True, "allowed_ips": [f"127.0.0.1:{server.port}"], "timeout": 10},
        "shell": {"allow": True, "whitelist": ["echo"], "env_clear": False, "timeout": 10},
    }
    # The denied fetch aims at a loopback address the policy does not name (127.0.0.2): the same
    # rule as the metadata IP, whose denial in the audit log test_net_decisions.py asserts, but a
    # broken rule here could only reach this machine (the CLI subprocess has no network guard).
    unnamed = f"http://127.0.0.2:{server.port}/latest/meta-data/"
    body = AUDITED_BODY.replace("UNNAMED", js(unnamed)).replace("URL", js(server.url("/hello")))
    agent(root, body, perms, env=["API_TOKEN"])
    log = tmp_path / "audit.jsonl"
    res = cli(
        "run",
        str(root),
        "--strict",
        "--audit",
        str(log),
        env={"API_TOKEN": TOKEN, "HUGIND_REDTEAM_SECRET": SECRET},
    )
    assert res.code == 3, res.stderr
    assert result(res)["value"] == [
        "allow",
        "PermissionDenied",
        "PermissionDenied",
        "allow",
        "PermissionDenied",
        "allow",
        "PermissionDenied",
        "PermissionDenied",
        "PermissionDenied",
    ]
    assert "denied 6 requests" in res.stderr
    text = log.read_text()
    entries = [json.loads(line) for line in text.splitlines()]
    assert len(entries) == 9 == len(text.splitlines())  # a guest newline cannot forge a line
    summary = [(e["capability"], e["op"], e["decision"], e["rule"]) for e in entries]
    assert summary == [
        ("filesystem", "read_text", "allow", "filesystem.read:data"),
        ("filesystem", "read_text", "deny", "filesystem.outside-roots"),
        ("filesystem", "write_text", "deny", "filesystem.outside-roots"),
        ("network", "connect", "allow", "network.allowed_ips"),
        ("network", "connect", "deny", "network.block_private_networks"),
        ("shell", "run", "allow", "shell.whitelist"),
        ("shell", "run", "deny", "shell.whitelist"),
        ("shell", "spawn", "deny", "shell.trampoline"),
        ("filesystem", "read_text", "deny", "filesystem.outside-roots"),
    ]
    for entry in entries:
        assert set(entry) == {"ts", "capability", "op", "request", "decision", "rule"}
    assert entries[3]["request"]["addresses"] == ["127.0.0.1"]
    assert entries[5]["request"]["programs"] == ["echo"]
    assert TOKEN not in text and SECRET not in text and "Bearer" not in text
    assert "HUGIND_REDTEAM_SECRET" not in text


def test_audit_cuts_long_guest_strings(attack):
    out = attack(
        "await run_command('echo ' + 'A'.repeat(20000) + '; id');",
        {"shell": {"allow": True, "whitelist": ["echo"]}},
    )
    (entry,) = out.audit
    assert entry["decision"] == "deny" and entry["rule"] == "shell.whitelist"
    assert len(entry["request"]["command"]) < 1100 and entry["request"]["command"].endswith("chars)")


@pytest.mark.parametrize("strict", [False, True])
def test_audit_log_path_is_not_agent_controlled(cli, agent_dir, tmp_path, strict):
    """The agent cannot write into the audit log through fs: the log lies outside its roots."""
    log = tmp_path / "audit.jsonl"
    root = agent(
        agent_dir(),
        f'fs.append_text({js(str(log))}, \'{{"decision": "allow"}}\\n\');',
        {"filesystem": {"write": ["."]}},
    )
    res = cli("run", str(root), "--audit", str(log), *(["--strict"] if strict else []))
    assert res.code == (3 if strict else 0)
    value = result(res)
    assert value["name"] == "PermissionDenied" and "outside the writable roots" in value["message"]
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(e["decision"], e["rule"]) for e in entries] == [("deny", "filesystem.outside-roots")]
