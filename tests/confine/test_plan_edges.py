"""hugind/confine/plan.py at its edges: exact rlimits, the /etc secrets without an engine,
roots that do not exist, relative program names, and real_path where the kernel's answer
is not a path.

Written against the survivors of a mutation run (bench/mutation.py confine.plan).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from hugind.confine.plan import (
    ETC_SECRETS,
    MIN_DATA_BYTES,
    MiB,
    Rlimits,
    _dedupe,
    _inside,
    absent_roots,
    etc_secrets,
    plan_child,
    real_path,
    rlimits_for,
)
from hugind.policy import PolicyEngine, build_policy
from hugind.policy.model import FsPolicy, Limits, Policy, ShellPolicy


def test_rlimits_as_spec_words_disable_core_dumps():
    assert Rlimits().as_dict() == {
        "nproc": 256,
        "fsize": 16 * MiB,
        "cpu": 60,
        "data": 512 * MiB,
        "nofile": 1024,
        "core": 0,
    }


def test_rlimits_follow_the_policy_with_their_floors(tmp_path):
    tiny = Policy(
        tmp_path,
        fs=FsPolicy(max_write_bytes=1000),
        shell=ShellPolicy(timeout=0.0),
        limits=Limits(timeout=7.2, memory_mb=64),
    )
    small = rlimits_for(tiny, "shell")
    assert (small.file_size, small.cpu_seconds, small.data_bytes) == (1 * MiB, 1, MIN_DATA_BYTES)
    big = Policy(
        tmp_path,
        fs=FsPolicy(max_write_bytes=40 * MiB),
        shell=ShellPolicy(timeout=2.5),
        limits=Limits(timeout=7.2, memory_mb=1024),
    )
    shell = rlimits_for(big, "shell")
    assert (shell.file_size, shell.cpu_seconds, shell.data_bytes) == (40 * MiB, 4, 1024 * MiB)
    server = rlimits_for(big, "mcp")  # an MCP server lives as long as the run
    assert server.cpu_seconds == math.ceil(7.2) + 1 == 9
    assert (server.processes, server.open_files) == (256, 1024)


def test_etc_secrets_without_an_engine_lists_this_machines_in_table_order():
    expected = tuple(f"/etc/{name}" for name in ETC_SECRETS if os.path.lexists(f"/etc/{name}"))
    assert etc_secrets() == expected
    assert all(p.startswith("/etc/") for p in expected)


def test_inside_decides_on_components_whatever_the_root_ends_with():
    assert _inside("/usr/bin", ["/"]) is True
    assert _inside("/a/dirX/f", ["/a/dirX"]) is True
    assert _inside("/a/dirX/f", ["/a/dirX/"]) is True
    assert _inside("/a/dirXY", ["/a/dirX"]) is False
    assert _inside("/a/dirX", ["/a/dirX"]) is True


def test_dedupe_keeps_the_outermost_paths_shallowest_first():
    assert _dedupe(["/z", "/a/b", "/a/b/c", "/z/y"]) == ["/z", "/a/b"]
    assert _dedupe(["/a/b", "/a", "/a-b"]) == ["/a", "/a-b"]


def test_absent_roots_are_named_by_their_spec(tmp_path):
    (tmp_path / "here").mkdir()
    policy = build_policy(
        {"filesystem": {"read": ["here", "gone"], "write": ["gone-too"]}},
        runtime_fs_mode="read-write",
        agent_root=tmp_path,
    )
    engine = PolicyEngine(policy)
    try:
        assert absent_roots(engine) == ["gone", "gone-too"]
    finally:
        engine.close()
    none = PolicyEngine(build_policy({"filesystem": {"read": ["gone"]}}, runtime_fs_mode="none", agent_root=tmp_path))
    try:
        assert absent_roots(none) == []
    finally:
        none.close()


def test_a_relative_program_name_adds_nothing_to_the_view(tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    engine = PolicyEngine(build_policy({"filesystem": {"read": ["data"]}}, runtime_fs_mode=None, agent_root=tmp_path))
    try:
        monkeypatch.chdir(tmp_path)  # a relative name resolved against this would name tmp_path/echo
        by_name = plan_child(engine, ("echo", "hi"), str(tmp_path / "data"), {})
        assert not any(p == str(tmp_path / "echo") for p in by_name.read), by_name.read
        outside = tmp_path / "tool"
        outside.write_text("")
        by_path = plan_child(engine, (str(outside),), str(tmp_path / "data"), {})
        assert str(outside) in by_path.read  # an absolute program outside the roots is shown, read-only
        assert plan_child(engine, (), str(tmp_path / "data"), {}).argv == ()
    finally:
        engine.close()


def test_real_path_is_realpaths_answer_where_the_kernel_names_no_path(tmp_path):
    assert real_path("/proc/self/ns/net") == os.path.realpath("/proc/self/ns/net")
    assert not real_path("/proc/self/ns/net").startswith("net:")
    marked = tmp_path / "f (deleted)"
    marked.write_text("")
    assert real_path(str(marked)) == str(marked)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # opened O_PATH: no reader needed, nothing blocks
    os.symlink("fifo", tmp_path / "to_fifo")
    assert real_path(str(tmp_path / "to_fifo")) == str(fifo)
    assert real_path(str(tmp_path / "absent" / "x")) == str(tmp_path / "absent" / "x")
    assert real_path(str(Path("/proc/self/cwd"))) == os.getcwd()
