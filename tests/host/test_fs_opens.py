"""hugind/host/fs.py opens what the policy resolved with no link followed, with the kernel's
openat2 and with the hand walk alike: a file or a parent swapped for a link to outside after
the check is refused the same way by both, and ordinary calls answer the same."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hugind.errors import HostCallError
from hugind.host import openat2
from hugind.host.fs import OPS
from hugind.host.registry import HostContext
from hugind.policy import PolicyEngine, build_policy

HANDLERS = {op.name: op.handler for op in OPS}


@pytest.fixture(params=["openat2", "walk"])
def opener(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "walk":
        monkeypatch.setattr(openat2, "available", lambda: False)
    elif not openat2.available():
        pytest.skip("no openat2 here")
    return request.param


@pytest.fixture
def setup(tmp_path: Path):
    root, outside = tmp_path / "agent", tmp_path / "outside"
    (root / "out" / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP SECRET")
    (root / "out" / "victim").write_text("mine")
    perms = {"filesystem": {"read": ["."], "write": ["out"]}}
    engine = PolicyEngine(build_policy(perms, runtime_fs_mode="read-write", agent_root=root))
    yield HostContext(policy=engine, agent_root=root), root, outside
    engine.close()


def _call(ctx: HostContext, op: str, **args) -> object:
    try:
        return HANDLERS[op](ctx, args)
    except HostCallError as err:
        return f"{type(err).__name__}: {err.message}"


def _swap_after_check(ctx: HostContext, monkeypatch: pytest.MonkeyPatch, swap) -> None:
    real = ctx.policy.check_fs

    def check_then_swap(op, path, *, write):
        result = real(op, path, write=write)
        swap()
        return result

    monkeypatch.setattr(ctx.policy, "check_fs", check_then_swap)


def test_ordinary_calls(setup, opener):
    ctx, _, _ = setup
    assert _call(ctx, "fs.write_text", path="out/sub/new.txt", data="hi") is None
    assert _call(ctx, "fs.read_text", path="out/sub/new.txt") == "hi"
    assert _call(ctx, "fs.list_dir", path="out") == ["sub", "victim"]
    assert _call(ctx, "fs.read_text", path="out/missing") == "NotFound: fs.read_text: 'out/missing' does not exist"


def test_a_file_swapped_for_a_link_is_refused(setup, opener, monkeypatch):
    ctx, root, outside = setup

    def swap() -> None:
        os.unlink(root / "out" / "victim")
        os.symlink(outside / "secret.txt", root / "out" / "victim")

    _swap_after_check(ctx, monkeypatch, swap)
    got = _call(ctx, "fs.write_text", path="out/victim", data="pwned")
    assert got == "PermissionDenied: filesystem: 'out/victim' became a symlink after the check"
    assert (outside / "secret.txt").read_text() == "TOP SECRET"


def test_a_parent_swapped_for_a_link_is_refused(setup, opener, monkeypatch):
    ctx, root, outside = setup

    def swap() -> None:
        os.rmdir(root / "out" / "sub")
        os.symlink(outside, root / "out" / "sub")

    _swap_after_check(ctx, monkeypatch, swap)
    got = _call(ctx, "fs.write_text", path="out/sub/new.txt", data="pwned")
    assert got == "HostIOError: fs.write_text: 'out/sub/new.txt': a component is not a directory"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
