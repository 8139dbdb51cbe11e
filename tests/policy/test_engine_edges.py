"""hugind/policy/engine.py at its edges: what a held read and a spawn write to the audit log,
what the run's collector is handed, and warnings given once per key.

Written against the survivors of a mutation run (bench/mutation.py policy.engine).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hugind.errors import PermissionDenied
from hugind.learn.collector import FsUse, UsageCollector
from hugind.policy import PolicyEngine, build_policy


def _engine(root: Path, permissions: dict, mode: str | None = None) -> PolicyEngine:
    return PolicyEngine(build_policy(permissions, runtime_fs_mode=mode, agent_root=root))


def _last(engine: PolicyEngine) -> dict:
    entry = list(engine.audit.entries)[-1]
    return {k: entry[k] for k in ("capability", "request", "decision", "rule")}


def test_a_held_read_is_audited_as_a_filesystem_read(tmp_path):
    (tmp_path / "f").write_text("x")
    engine = _engine(tmp_path, {"filesystem": {"read": ["."]}}, "read-only")
    real, fd = engine.check_read_held("read", "f")
    try:
        assert real == str(tmp_path / "f")
    finally:
        if fd is not None:
            os.close(fd)
    engine.check_fs("read", "f", write=False)
    plain = _last(engine)
    held = list(engine.audit.entries)[-2]
    assert {k: held[k] for k in plain} == plain
    assert plain["capability"] == "filesystem" and plain["decision"] == "allow"
    assert plain["request"] == {"op": "read", "path": "f", "write": False}
    assert plain["rule"]


def test_a_held_read_outside_the_roots_is_an_audited_filesystem_denial(tmp_path):
    engine = _engine(tmp_path, {"filesystem": {"read": ["."]}}, "read-only")
    with pytest.raises(PermissionDenied):
        engine.check_read_held("read", "/etc/hostname")
    entry = _last(engine)
    assert (entry["capability"], entry["decision"]) == ("filesystem", "deny")
    assert entry["request"] == {"op": "read", "path": "/etc/hostname", "write": False}


def test_a_spawn_is_audited_with_its_programs_and_the_whitelist_rule(tmp_path):
    engine = _engine(tmp_path, {"shell": {"allow": True, "whitelist": ["echo"]}})
    engine.check_spawn("echo", ["hi"])
    assert _last(engine) == {
        "capability": "shell",
        "request": {"op": "spawn", "program": "echo", "args": ["hi"], "programs": ["echo"]},
        "decision": "allow",
        "rule": "shell.whitelist",
    }
    with pytest.raises(PermissionDenied):
        engine.check_spawn("rm", ["-rf", "x"])
    entry = _last(engine)
    assert (entry["capability"], entry["decision"]) == ("shell", "deny")
    assert entry["request"] == {"op": "spawn", "program": "rm", "args": ["-rf", "x"]}


def test_the_collector_gets_the_real_path_and_a_certain_spawn(tmp_path):
    (tmp_path / "f").write_text("x")
    engine = _engine(tmp_path, {"filesystem": {"read": ["."]}, "shell": {"allow": True}}, "read-only")
    engine.collector = collector = UsageCollector()
    engine.check_fs("read", "f", write=False)
    engine.check_spawn("echo", ["hi"])
    assert collector.usage.fs == {FsUse(tmp_path / "f", False)}
    assert collector.usage.shell_uncertain is False


def test_a_warning_is_given_once_per_key(tmp_path, capsys):
    engine = _engine(tmp_path, {})
    engine.warn_once("a", "first")
    engine.warn_once("a", "again")
    engine.warn_once("b", "second")
    assert capsys.readouterr().err == "hugind: warning: first\nhugind: warning: second\n"
