"""The plan a child runs under, derived from the policy, and the argv that enforces it.

Pure checks of what hugind asks the kernel for (the red-team suite checks
what the kernel then does).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from hugind.confine.command import SPECIAL_MOUNTS, bwrap_argv
from hugind.confine.landlock import carve
from hugind.confine.plan import SYSTEM_DIRS, plan_child
from hugind.paths import engine_dir
from hugind.policy import PolicyEngine, build_policy
from hugind.policy.boundary import BoundaryConflict


def engine_for(root: Path, permissions: dict, mode: str | None = None) -> PolicyEngine:
    return PolicyEngine(build_policy(permissions, runtime_fs_mode=mode, agent_root=root))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for name in ("data", "out", "data/deep"):
        (tmp_path / name).mkdir()
    return tmp_path


def test_roots_follow_runtime_fs_mode(root):
    perms = {"filesystem": {"read": ["data"], "write": ["out"]}}
    cwd = str(root / "data/deep")
    rw = plan_child(engine_for(root, perms), ["/bin/echo"], cwd, {})
    assert str(root / "out") in rw.write and str(root / "data") in rw.read
    ro = plan_child(engine_for(root, perms, "read-only"), ["/bin/echo"], cwd, {})
    assert ro.write == () and str(root / "out") in ro.read
    none = plan_child(engine_for(root, perms, "none"), ["/bin/echo"], cwd, {})
    assert none.write == () and str(root / "out") not in none.read and str(root / "data") not in none.read
    assert cwd in none.read  # only the working directory, read-only


def test_scratch_mode_writes_only_the_scratch_dir(root):
    engine = engine_for(root, {"filesystem": {"read": ["data"], "write": ["out"]}}, "scratch")
    plan = plan_child(engine, ["/bin/echo"], str(engine.scratch_dir), {})
    assert plan.write == (str(engine.scratch_dir),)
    engine.close()


def test_nested_roots_are_not_bound_twice_and_writable_wins(root):
    perms = {"filesystem": {"read": ["data", "data/deep", "out"], "write": ["out"]}}
    plan = plan_child(engine_for(root, perms), ["/bin/echo"], str(root), {})
    assert str(root / "data/deep") not in plan.read  # covered by data
    assert str(root / "out") not in plan.read and str(root / "out") in plan.write


def test_system_dirs_and_etc_secrets(root):
    plan = plan_child(engine_for(root, {}), ["/bin/echo"], str(root), {})
    for d in SYSTEM_DIRS:
        if os.path.isdir(d) and not os.path.islink(d):
            assert d in plan.read
    assert "/etc" in plan.read
    if os.path.exists("/etc/shadow"):
        assert "/etc/shadow" in plan.hide


class InstalledInSystemDir(PolicyEngine):
    """hugind installed inside a directory children read (``/usr/lib/python3/...``): the
    boundary's ``child_system`` then contains its engine."""

    def fs_view(self):  # type: ignore[override]
        view = super().fs_view()
        return dataclasses.replace(view, child_system=(*view.child_system, str(engine_dir().parent)))


def test_a_root_containing_hugind_files_is_refused(root):
    with pytest.raises(BoundaryConflict):
        engine_for(root, {"filesystem": {"read": [str(engine_dir().parent)]}})


def test_hugind_files_inside_a_system_dir_are_hidden(root):
    engine = InstalledInSystemDir(build_policy({}, runtime_fs_mode=None, agent_root=root))
    plan = plan_child(engine, ["/bin/echo"], str(root), {})
    assert str(engine_dir().parent) in plan.read
    assert os.path.realpath(engine_dir()) in plan.hide


def test_a_program_outside_the_system_dirs_is_granted_alone(root, tmp_path_factory):
    tools = tmp_path_factory.mktemp("tools")
    program = tools / "lint"
    program.write_text("#!/bin/sh\n")
    plan = plan_child(engine_for(root, {}), [str(program)], str(root), {})
    assert str(program) in plan.read and str(tools) not in plan.read


def test_rlimits_come_from_the_policy(root):
    perms = {"shell": {"allow": True, "timeout": 7}, "filesystem": {"max_write_bytes": 2 << 20}}
    plan = plan_child(engine_for(root, perms), ["/bin/echo"], str(root), {})
    assert plan.rlimits.cpu_seconds == 8 and plan.rlimits.file_size == 2 << 20
    mcp = plan_child(engine_for(root, {"limits": {"timeout": 30}}), ["/bin/echo"], str(root), {}, kind="mcp")
    assert mcp.rlimits.cpu_seconds == 31


def test_network_is_proxy_only_when_the_policy_allows_it(root):
    assert plan_child(engine_for(root, {}), ["/bin/echo"], str(root), {}).network == "none"
    allowed = engine_for(root, {"network": {"allow": True}})
    assert plan_child(allowed, ["/bin/echo"], str(root), {}).network == "proxy"


def _mount_order(argv: list[str]) -> list[tuple[str, str]]:
    out, i = [], 0
    while argv[i] != "--":
        if argv[i] in ("--ro-bind", "--bind", "--symlink"):
            out.append((argv[i], argv[i + 2]))
            i += 3
        elif argv[i] in ("--proc", "--dev", "--tmpfs", "--remount-ro", "--chdir"):
            out.append((argv[i], argv[i + 1]))
            i += 2
        elif argv[i] == "--cap-drop":
            i += 2
        else:
            i += 1
    return out


def test_bwrap_mounts_parents_first_and_hides_last(root):
    perms = {"filesystem": {"read": ["data"], "write": ["out"]}}
    engine = InstalledInSystemDir(build_policy(perms, runtime_fs_mode=None, agent_root=root))
    plan = plan_child(engine, ["/bin/echo", "hi"], str(root), {})
    argv = bwrap_argv(plan, "/usr/bin/bwrap", "/usr/bin/prlimit", None)
    order = _mount_order(argv)
    where = {target: i for i, (_, target) in enumerate(order)}
    for flag, special in SPECIAL_MOUNTS:
        assert (flag, special) in order
        # a root under /tmp stays visible: /tmp is replaced before deeper binds
        assert all(where[special] < where[p] for p in plan.read + plan.write if p.startswith(special + "/"))
    hidden = os.path.realpath(engine_dir())
    assert where[hidden] > where[str(engine_dir().parent)]
    assert argv[-2:] == ["/bin/echo", "hi"] and "--unshare-all" in argv and "--disable-userns" in argv
    assert argv[argv.index("--chdir") + 1] == str(root)


def test_carve_grants_everything_but_the_hidden_path(tmp_path):
    for rel in ("a/b/secret", "a/b/keep", "a/other", "c"):
        (tmp_path / rel).mkdir(parents=True)
    granted = carve(str(tmp_path), [str(tmp_path / "a/b/secret")])
    assert sorted(Path(p).relative_to(tmp_path).as_posix() for p in granted) == ["a/b/keep", "a/other", "c"]
    assert carve(str(tmp_path), []) == [str(tmp_path)]
    assert carve(str(tmp_path / "c"), [str(tmp_path)]) == []
    assert carve(str(tmp_path), [str(tmp_path) + "-sibling"]) == [str(tmp_path)]  # by components
