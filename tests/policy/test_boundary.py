"""The compiled boundary: a root overlapping hugind's own files is refused before the run,
and ``fs.*`` still refuses hugind's files and every parent of one (second line)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hugind.policy import PolicyEngine, build_policy
from hugind.policy.audit import AuditLog
from hugind.policy.boundary import Boundary, BoundaryConflict, compile_boundary, conflicts
from hugind.policy.fs import decide_fs
from hugind.policy.model import Denied


def _policy(root: Path, read: list[str], write: list[str]):
    return build_policy({"filesystem": {"read": read, "write": write}}, runtime_fs_mode="read-write", agent_root=root)


def test_a_root_containing_the_cache_is_refused_naming_both(tmp_path, monkeypatch):
    cache = tmp_path / "agent" / "cache"
    cache.mkdir(parents=True)
    monkeypatch.setenv("HUGIND_CACHE_DIR", str(cache))
    with pytest.raises(BoundaryConflict) as refused:
        PolicyEngine(_policy(tmp_path / "agent", ["."], []))
    text = str(refused.value)
    assert f"({tmp_path / 'agent'}) contains" in text and str(cache) in text
    assert "HUGIND_CACHE_DIR" in text and refused.value.exit_code == 2


def test_a_root_inside_the_cache_is_refused(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    (cache / "modules").mkdir(parents=True)
    (tmp_path / "agent").mkdir()
    monkeypatch.setenv("HUGIND_CACHE_DIR", str(cache))
    with pytest.raises(BoundaryConflict, match="lies inside"):
        PolicyEngine(_policy(tmp_path / "agent", [str(cache / "modules")], []))


def test_the_audit_log_inside_a_root_is_refused(tmp_path):
    (tmp_path / "agent").mkdir()
    audit = AuditLog(tmp_path / "agent" / "audit.jsonl")
    try:
        with pytest.raises(BoundaryConflict, match="--audit"):
            PolicyEngine(_policy(tmp_path / "agent", [], ["."]), audit)
    finally:
        audit.close()


def test_a_root_beside_huginds_files_is_fine(tmp_path, monkeypatch):
    (tmp_path / "agent").mkdir()
    monkeypatch.setenv("HUGIND_HOME", str(tmp_path / "agent-home"))  # a sibling sharing a prefix
    engine = PolicyEngine(_policy(tmp_path / "agent", ["."], ["."]))
    assert conflicts(engine.policy.fs, engine.internal) == []
    engine.close()


def test_mode_none_has_no_roots_to_refuse(tmp_path, monkeypatch):
    (tmp_path / "agent").mkdir()
    monkeypatch.setenv("HUGIND_HOME", str(tmp_path / "agent" / "home"))
    policy = build_policy({"filesystem": {"read": ["."]}}, runtime_fs_mode="none", agent_root=tmp_path / "agent")
    PolicyEngine(policy).close()


# --- the second line: a boundary built around the refusal still keeps fs.* out ---------


@pytest.fixture
def unchecked(tmp_path: Path) -> Boundary:
    """A boundary whose writable root holds an internal dir: what refuse_conflicts prevents."""
    root = tmp_path / "agent"
    home = root / "home"
    (home / "sessions").mkdir(parents=True)
    (home / "config.yaml").write_text("api_key: sk-x\n")
    (root / "other.txt").write_text("ok")
    policy = _policy(root, [], ["."])
    with pytest.raises(BoundaryConflict):
        compile_boundary(policy.fs, root, None, (home / "config.yaml", home / "sessions"))
    return Boundary(policy.fs, root, None, (home / "config.yaml", home / "sessions"))


@pytest.mark.parametrize(
    ("op", "path", "write"),
    [
        ("fs.read_text", "home/config.yaml", False),
        ("fs.write_text", "home/sessions/x.json", True),
        ("fs.rename", "home", True),  # a parent of internal files: the #26 road
        ("fs.remove", "home", True),
        ("fs.copy", "home", False),  # copying the parent carries the config out
        ("fs.copy", ".", False),
        ("fs.rename", "home/sessions", True),
        ("fs.mkdir", "home/sessions/new", True),
    ],
)
def test_internal_files_and_their_parents_are_refused(unchecked, op, path, write):
    with pytest.raises(Denied) as denied:
        decide_fs(unchecked, op, path, write=write)
    assert denied.value.rule == "filesystem.internal"


def test_the_rest_of_the_root_stays_usable(unchecked):
    assert decide_fs(unchecked, "fs.read_text", "other.txt", write=False)[1].startswith("filesystem.read")
    assert decide_fs(unchecked, "fs.rename", "other.txt", write=True)[1].startswith("filesystem.write")
    # Listing the parent reads names only, and changes nothing: allowed.
    assert decide_fs(unchecked, "fs.list_dir", "home", write=False)[1].startswith("filesystem.read")
