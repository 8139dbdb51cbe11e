"""The derivation rules on their own: a collector fed through the engine's hook by
real checks, then ``derive``. MCP, headroom and the notes, which the CLI tests do
not reach (MCP servers cannot start inside a worktree)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hugind.errors import PermissionDenied
from hugind.learn import UsageCollector, derive
from hugind.mcp.policy import Decision, McpPolicy, audit
from hugind.policy import PolicyEngine, build_policy
from hugind.policy.model import MiB


def _engine(root: Path, permissions: dict, mode: str = "read-write") -> tuple[PolicyEngine, UsageCollector]:
    policy = build_policy(permissions, runtime_fs_mode=mode, agent_root=root)
    engine = PolicyEngine(policy)
    collector = UsageCollector()
    collector.attach(engine)
    return engine, collector


def test_paths_collapse_to_the_deepest_covering_directory(tmp_path: Path) -> None:
    for rel in ("data/a/x/1.txt", "data/a/y/2.txt", "data/b.txt", "out/r/s/3.txt", "single.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    engine, collector = _engine(tmp_path, {"filesystem": {"read": ["data", "single.txt"], "write": ["out"]}})
    engine.check_fs("read", "data/a/x/1.txt", write=False)
    engine.check_fs("read", "data/a/y/2.txt", write=False)
    engine.check_fs("read", "single.txt", write=False)
    engine.check_fs("write", "out/r/s/new.txt", write=True)  # not there yet: its directory is
    engine.check_fs("read", "out/r/s/3.txt", write=False)  # inside the learned write root: no read root
    with pytest.raises(PermissionDenied):
        engine.check_fs("read", "elsewhere.txt", write=False)
    learned = derive(collector.usage, engine.policy, name="t")
    fs = learned.preset["permissions"]["filesystem"]
    assert fs["read"] == ["data/a", "single.txt"]
    assert fs["write"] == ["out/r/s"]
    assert learned.preset["runtime_fs_mode"] == "read-write"
    assert [d.what for d in collector.usage.denials] == ["elsewhere.txt"]


def test_reads_only_drop_the_mode_to_read_only_and_nothing_to_none(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    engine, collector = _engine(tmp_path, {"filesystem": {"read": ["d"], "write": ["d"]}})
    assert derive(collector.usage, engine.policy, name="t").preset["runtime_fs_mode"] == "none"
    engine.check_fs("list", "d", write=False)
    learned = derive(collector.usage, engine.policy, name="t").preset
    assert learned["runtime_fs_mode"] == "read-only"
    assert learned["permissions"]["filesystem"]["read"] == ["d"]


def test_limits_get_headroom_but_never_exceed_the_start(tmp_path: Path) -> None:
    engine, collector = _engine(tmp_path, {"limits": {"timeout": 100, "memory_mb": 64}})
    collector.usage.peak_memory_bytes = 20 * MiB
    collector.finish(20.2)
    limits = derive(collector.usage, engine.policy, name="t").preset["permissions"]["limits"]
    assert limits["timeout"] == 61  # ceil(3 x 20.2)
    assert limits["memory_mb"] == 48  # 2 x 20 MiB, rounded up to 16
    collector.finish(50.0)
    collector.usage.peak_memory_bytes = 60 * MiB
    limits = derive(collector.usage, engine.policy, name="t").preset["permissions"]["limits"]
    assert (limits["timeout"], limits["memory_mb"]) == (100, 64)  # capped by the starting policy
    collector.finish(0.1)
    collector.usage.peak_memory_bytes = 1 * MiB
    limits = derive(collector.usage, engine.policy, name="t").preset["permissions"]["limits"]
    assert (limits["timeout"], limits["memory_mb"]) == (30, 32)  # the floors


def test_mcp_servers_and_tools_used(tmp_path: Path) -> None:
    engine, collector = _engine(tmp_path, {})
    mcp = McpPolicy(allow=True)
    audit(engine, {"op": "list_tools", "servers": ["files", "web"], "for": "model"}, Decision(True, "mcp.allow"))
    audit(engine, {"op": "call_tool", "server": "files", "tool": "read"}, Decision(True, "mcp.allow"))
    with pytest.raises(PermissionDenied):
        audit(engine, {"op": "call_tool", "server": "web", "tool": "get"}, Decision(False, "mcp.tools", "no"))
    section = derive(collector.usage, engine.policy, name="t", mcp=mcp).preset["permissions"]["mcp"]
    assert section == {"allow": True, "servers": ["files", "web"], "tools": ["files:read"], "timeout": 60.0}
    unused = derive(UsageCollector().usage, engine.policy, name="t", mcp=mcp).preset["permissions"]["mcp"]
    assert unused == {"allow": False}


def test_programs_hosts_and_notes(tmp_path: Path) -> None:
    engine, collector = _engine(tmp_path, {"shell": {"allow": True}, "network": {"allow": True}})
    engine.check_shell("ls | wc -l && env echo hi")
    engine.check_shell("$(echo ls) -l")  # no whitelist: allowed, but not fully analysed
    learned = derive(collector.usage, engine.policy, name="t", env_names=["TOKEN"])
    shell = learned.preset["permissions"]["shell"]
    assert {"ls", "wc", "env", "echo"} <= set(shell["whitelist"])
    assert learned.preset["permissions"]["network"] == {"allow": False}
    notes = "\n".join(learned.notes)
    assert "could not be fully analysed" in notes
    assert "env passed to the agent: TOKEN" in notes
