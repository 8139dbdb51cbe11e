"""The audit log: one JSON line per decision, allow and deny, never a secret."""

from __future__ import annotations

import json
import threading

import pytest

from hugind.errors import PermissionDenied, UsageError
from hugind.policy import AuditLog


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_every_decision_is_a_json_line(harness, agent_root, tmp_path):
    (agent_root / "data").mkdir()
    (agent_root / "data" / "f").write_text("x")
    log = tmp_path / "audit.jsonl"
    with AuditLog(log) as audit:
        perms = {
            "filesystem": {"read": ["data"]},
            "network": {"allow": True, "allowed_ips": ["127.0.0.1"]},
            "shell": {"allow": True, "whitelist": ["echo"]},
        }
        h = harness(perms, audit=audit)
        h.call("fs.read_text", path="data/f")
        h.fails("fs.read_text", path="../x")
        h.engine.check_connect("http://127.0.0.1:8/")
        with pytest.raises(PermissionDenied):
            h.engine.check_connect("http://169.254.169.254/")
        h.call("shell.run", command="echo hi")
        h.fails("shell.run", command="echo hi; id")
    entries = lines(log)
    assert [(e["capability"], e["op"], e["decision"], e["rule"]) for e in entries] == [
        ("filesystem", "read_text", "allow", "filesystem.read:data"),
        ("filesystem", "read_text", "deny", "filesystem.outside-roots"),
        ("network", "connect", "allow", "network.allowed_ips"),
        ("network", "connect", "deny", "network.block_private_networks"),
        ("shell", "run", "allow", "shell.whitelist"),
        ("shell", "run", "deny", "shell.whitelist"),
    ]
    assert entries[0]["request"] == {"op": "read_text", "path": "data/f", "write": False}
    assert entries[4]["request"]["programs"] == ["echo"]
    assert all(e["ts"].endswith("+00:00") for e in entries)
    assert h.engine.denials == 3


def test_env_values_and_credentials_never_reach_the_log(harness, tmp_path):
    log = tmp_path / "audit.jsonl"
    with AuditLog(log) as audit:
        h = harness({"shell": {"allow": True, "env_clear": False}}, audit=audit)
        h.engine.declared_env = {"HUGIND_AUDIT_SECRET": "never-log-me"}  # declared: reaches children
        assert "never-log-me" in h.call("shell.spawn", program="env", args=[])["stdout"]
        h.engine.record("network", {"op": "fetch", "headers": {"Authorization": "Bearer tok", "X": "1"}}, True, "r")
        h.engine.record("shell", {"op": "x", "env": {"KEY": "never-log-me"}}, False, "r")
    text = log.read_text()
    assert "never-log-me" not in text and "Bearer tok" not in text
    assert lines(log)[1]["request"]["headers"] == {"Authorization": "<redacted>", "X": "1"}


def test_long_requests_are_cut(tmp_path):
    audit = AuditLog(tmp_path / "a.jsonl")
    entry = audit.write("shell", {"op": "run", "command": "x" * 5000}, True, "shell.allow")
    assert len(entry["request"]["command"]) < 1100 and entry["request"]["command"].endswith("(+4000 chars)")
    audit.close()


def test_concurrent_writers_produce_whole_lines(tmp_path):
    log = tmp_path / "audit.jsonl"
    audit = AuditLog(log)

    def worker(n: int) -> None:
        for i in range(200):
            audit.write("filesystem", {"op": "read_text", "path": f"{n}/{i}" * 20}, i % 2 == 0, "rule")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    audit.close()
    entries = lines(log)
    assert len(entries) == 1600 and len(audit.entries) == 1600
    assert sum(e["decision"] == "deny" for e in entries) == 800


def test_unwritable_audit_path_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="cannot open audit log"):
        AuditLog(tmp_path / "missing-dir" / "audit.jsonl")


def test_memory_only_log_keeps_recent_entries():
    audit = AuditLog(keep=3)
    for i in range(5):
        audit.write("fs", {"op": str(i)}, True, "r")
    assert [e["op"] for e in audit.entries] == ["2", "3", "4"]
