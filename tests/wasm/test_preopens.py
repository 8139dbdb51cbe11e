"""Raw wasm agents' own file I/O (WASI) sees exactly what the policy allows."""

from __future__ import annotations

import pytest

from hugind.errors import UsageError
from tests.runtime.helpers import run_captured


def _layout(agent):
    (agent / "data").mkdir()
    (agent / "data" / "in.txt").write_text("hello from data\n")
    (agent / "out").mkdir()
    (agent.parent / "outside.txt").write_text("secret outside\n")


def _results(value):
    return {line.rsplit(": ", 1)[0]: line.rsplit(": ", 1)[1] for line in value if line != "end"}


def test_no_filesystem_policy_means_no_preopens(guest_agent):
    agent = guest_agent("wasi_files")
    _layout(agent)
    got = _results(run_captured(agent).result.value)
    assert set(got.values()) == {"denied"}
    assert not (agent / "data" / "new.txt").exists()


def test_read_only_roots_are_readable_not_writable(guest_agent):
    agent = guest_agent("wasi_files", runtime_fs_mode="read-only", permissions={"filesystem": {"read": ["data"]}})
    _layout(agent)
    got = _results(run_captured(agent).result.value)
    assert got["read /data/in.txt"] == "hello from data"
    assert got["read ../outside.txt"] == "denied"
    assert got["read /etc/hostname"] == "denied"
    assert got["write data/new.txt"] == "denied"
    assert got["write out/new.txt"] == "denied"
    assert not (agent / "data" / "new.txt").exists()


def test_read_write_mode_opens_write_roots_for_writing(guest_agent):
    agent = guest_agent(
        "wasi_files",
        runtime_fs_mode="read-write",
        permissions={"filesystem": {"read": ["data"], "write": ["out"]}},
    )
    _layout(agent)
    got = _results(run_captured(agent).result.value)
    assert got["read /data/in.txt"] == "hello from data"
    assert got["write out/new.txt"] == "ok"
    assert got["write data/new.txt"] == "denied"
    assert (agent / "out" / "new.txt").read_text() == "written by wasm\n"
    assert not (agent / "data" / "new.txt").exists()


def test_scratch_mode_gives_a_private_writable_dir(guest_agent):
    agent = guest_agent("wasi_files", runtime_fs_mode="scratch", permissions={"filesystem": {"read": ["data"]}})
    _layout(agent)
    got = _results(run_captured(agent).result.value)
    assert got["write /scratch/new.txt"] == "ok"
    assert got["write data/new.txt"] == "denied"
    assert got["read /data/in.txt"] == "hello from data"


def test_a_root_containing_hugind_internals_is_refused_for_raw_wasm(guest_agent, tmp_path, monkeypatch):
    monkeypatch.setenv("HUGIND_CACHE_DIR", str(tmp_path / "shared" / "cache"))
    (tmp_path / "shared" / "cache").mkdir(parents=True)
    agent = guest_agent(
        "wasi_files", runtime_fs_mode="read-only", permissions={"filesystem": {"read": [str(tmp_path / "shared")]}}
    )
    with pytest.raises(UsageError, match="hugind's own"):  # refused by the policy itself now (#26)
        run_captured(agent)


def test_relative_paths_resolve_against_the_agent_root_view(guest_agent):
    agent = guest_agent("wasi_files", runtime_fs_mode="read-only", permissions={"filesystem": {"read": ["data"]}})
    _layout(agent)
    got = _results(run_captured(agent).result.value)
    assert got["read data/in.txt"] == "hello from data"
