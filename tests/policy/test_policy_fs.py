"""Filesystem rules and the fs.* capability: what is allowed works, every escape is denied."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from policy_vectors import FS_POLICY, FS_READ_ESCAPES, FS_WRITE_ESCAPES, build_fs_layout

from hugind.errors import HostIOError, InvalidArgument, LimitHit, NotFound, PermissionDenied
from hugind.host import fs
from hugind.policy import build_policy


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    return tmp_path / "outside"


@pytest.fixture
def layout(agent_root: Path, outside: Path) -> Path:
    build_fs_layout(agent_root, outside)
    return agent_root


def _fill(template: str, outside: Path) -> str:
    return template.replace("{outside}", str(outside))


# --- attacks -----------------------------------------------------------------------------


# Every op that reads through a path; the registry's other ops write (FS_WRITE_ESCAPES) or take no path.
READ_OPS = (
    "fs.read_text",
    "fs.read_bytes",
    "fs.exists",
    "fs.is_file",
    "fs.is_dir",
    "fs.stat",
    "fs.realpath",
    "fs.list_dir",
)


def test_every_registry_op_is_attacked():
    """A new fs op fails here until it is in READ_OPS or FS_WRITE_ESCAPES."""
    attacked = set(READ_OPS) | {v[0] for v in FS_WRITE_ESCAPES} | {"fs.cwd"}
    assert {op.name for op in fs.OPS} == attacked


@pytest.mark.parametrize(("path", "rule", "fragment"), FS_READ_ESCAPES, ids=[v[0] for v in FS_READ_ESCAPES])
@pytest.mark.parametrize("op", READ_OPS)
def test_read_escapes_are_denied(harness, layout, outside, op, path, rule, fragment):
    h = harness(FS_POLICY)
    guest = _fill(path, outside)
    err = h.fails(op, path=guest)
    assert isinstance(err, PermissionDenied)
    assert fragment in err.message
    assert repr(guest) in err.message  # names the request as the guest made it
    assert str(outside) not in err.message or str(outside) in guest  # never reveals a resolved host path
    assert h.audit[-1]["decision"] == "deny" and h.audit[-1]["rule"] == rule
    assert h.engine.denials >= 1


@pytest.mark.parametrize(("path", "rule", "fragment"), FS_READ_ESCAPES, ids=[v[0] for v in FS_READ_ESCAPES])
def test_read_escapes_through_lstat(harness, layout, outside, path, rule, fragment):
    """``lstat`` (the policy op ``fs.stat`` checks first) acts on the entry: a link inside a
    root may be looked at itself, never followed; every other escape gets the same denial."""
    h = harness(FS_POLICY)
    guest = _fill(path, outside)
    joined = os.path.join(layout, guest)
    parent, name = os.path.split(joined)
    entry = Path(os.path.realpath(parent)) / name
    if name and os.path.islink(joined) and entry.parent in (layout / "data", layout / "out"):
        real = h.engine.check_fs("lstat", guest, write=False)
        assert real == entry and real.is_symlink()  # the link itself, inside the root
        assert h.audit[-1]["decision"] == "allow"
        return
    with pytest.raises(PermissionDenied) as caught:
        h.engine.check_fs("lstat", guest, write=False)
    assert fragment in caught.value.message
    assert h.audit[-1]["decision"] == "deny" and h.audit[-1]["rule"] == rule
    assert h.audit[-1]["request"]["op"] == "lstat"


def test_escape_messages_do_not_show_the_resolved_target(harness, layout, outside):
    h = harness(FS_POLICY)
    err = h.fails("fs.read_text", path="data/link_out")
    assert str(outside) not in err.message and "secret" not in err.message
    assert "'data/link_out'" in err.message


@pytest.mark.parametrize(
    ("op", "args", "rule", "fragment"), FS_WRITE_ESCAPES, ids=[f"{v[0]}:{v[1]}" for v in FS_WRITE_ESCAPES]
)
def test_write_escapes_are_denied(harness, layout, outside, op, args, rule, fragment):
    h = harness(FS_POLICY)
    before = (layout / "data" / "readme.txt").read_text(), (outside / "secret.txt").read_text()
    err = h.fails(op, **{k: _fill(v, outside) for k, v in args.items()})
    assert isinstance(err, PermissionDenied), err
    assert fragment in err.message
    assert h.audit[-1]["rule"] == rule
    assert ((layout / "data" / "readme.txt").read_text(), (outside / "secret.txt").read_text()) == before
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_prefix_confusion_is_decided_by_components(harness, agent_root):
    (agent_root / "data").mkdir()
    (agent_root / "data-evil").mkdir()
    (agent_root / "data-evil" / "x").write_text("x")
    (agent_root / "data" / "x").write_text("ok")
    h = harness({"filesystem": {"read": ["data"]}})
    assert h.call("fs.read_text", path="data/x") == "ok"
    assert "outside the readable roots" in h.fails("fs.read_text", path="data-evil/x").message
    assert "outside" in h.fails("fs.read_text", path=str(agent_root / "data-evil" / "x")).message


def test_nul_bytes_and_huge_paths_are_invalid(harness, layout):
    h = harness(FS_POLICY)
    err = h.fails("fs.read_text", path="data/readme.txt\0.png")
    assert isinstance(err, InvalidArgument) and "NUL byte" in err.message
    err = h.fails("fs.read_text", path="data/" + "a/" * 3000)
    assert isinstance(err, InvalidArgument) and "longer than 4096 bytes" in err.message
    err = h.fails("fs.read_text", path="data/" + "b" * 300)
    assert isinstance(err, InvalidArgument) and "component over 255 bytes" in err.message
    err = h.fails("fs.read_text", path="")
    assert isinstance(err, InvalidArgument)
    assert h.audit[-1]["rule"] == "filesystem.path-syntax"


def test_case_aliasing_does_not_widen(harness, agent_root):
    (agent_root / "data").mkdir()
    (agent_root / "DATA").mkdir()
    (agent_root / "DATA" / "x").write_text("x")
    h = harness({"filesystem": {"read": ["data"]}})
    assert "outside" in h.fails("fs.read_text", path="DATA/x").message


def test_proc_is_allowed_only_when_listed(harness, agent_root):
    h = harness({"filesystem": {"read": ["/proc/self/status", "."]}})
    assert "Name:" in h.call("fs.read_text", path="/proc/self/status")
    assert "off limits" in h.fails("fs.read_text", path="/proc/self/environ").message
    assert "off limits" in h.fails("fs.read_text", path="/proc/self/cmdline").message


def test_root_listing_slash_still_keeps_special_dirs_out(harness, agent_root):
    # "/" contains hugind's own files, so such a policy is refused before the run (#26);
    # the special-dir rule is checked on the compiled boundary alone.
    from hugind.policy.boundary import Boundary, BoundaryConflict
    from hugind.policy.fs import decide_fs
    from hugind.policy.model import Denied

    with pytest.raises(BoundaryConflict):
        harness({"filesystem": {"read": ["/"]}})
    policy = build_policy({"filesystem": {"read": ["/"]}}, runtime_fs_mode=None, agent_root=agent_root)
    view = Boundary(policy.fs, agent_root, None, ())
    assert Path("/etc/passwd").exists()  # "/" really would be readable, by its own rule
    assert decide_fs(view, "fs.exists", "/etc/passwd", write=False)[1] == "filesystem.read:/"
    for path in ("/proc/self/environ", "/sys/kernel", "/dev/null"):
        with pytest.raises(Denied) as denied:
            decide_fs(view, "fs.exists", path, write=False)
        assert denied.value.message.endswith("is off limits unless listed explicitly")


def test_mode_none_denies_everything(harness, layout):
    h = harness(FS_POLICY, mode="none")
    err = h.fails("fs.read_text", path="data/readme.txt")
    assert "runtime_fs_mode is none" in err.message
    assert h.audit[-1]["rule"] == "filesystem.mode"


def test_no_permissions_means_no_files(harness, layout):
    h = harness(None)
    assert h.engine.policy.fs.mode == "none"
    assert "runtime_fs_mode is none" in h.fails("fs.exists", path="data/readme.txt").message


def test_read_only_mode_blocks_every_kind_of_write(harness, layout):
    h = harness(FS_POLICY, mode="read-only")
    assert h.call("fs.read_text", path="out/mine.txt") == "written by the agent"
    for op, args in [
        ("fs.write_text", {"path": "out/mine.txt", "data": ""}),
        ("fs.append_text", {"path": "out/mine.txt", "data": "x"}),
        ("fs.rename", {"src": "out/mine.txt", "dst": "out/b.txt"}),
        ("fs.remove", {"path": "out/mine.txt"}),
        ("fs.mkdir", {"path": "out/d"}),
        ("fs.copy", {"src": "data/readme.txt", "dst": "out/c.txt"}),
    ]:
        err = h.fails(op, **args)
        assert "runtime_fs_mode read-only" in err.message, op
    assert (layout / "out" / "mine.txt").read_text() == "written by the agent"


def test_scratch_mode_writes_only_to_a_private_dir_removed_at_close(harness, layout):
    h = harness(FS_POLICY, mode="scratch")
    scratch = h.engine.scratch_dir
    assert scratch is not None and scratch.is_dir() and not scratch.is_relative_to(layout)
    assert h.call("fs.cwd") == "."
    h.call("fs.write_text", path="notes/../a.txt", data="scratch!")
    assert (scratch / "a.txt").read_text() == "scratch!"
    assert h.call("fs.realpath", path="a.txt") == "a.txt"
    assert h.call("fs.read_text", path=str(layout / "data" / "readme.txt")) == "public data"
    assert "writable roots (<scratch>)" in h.fails("fs.write_text", path=str(layout / "out" / "x"), data="").message
    h.engine.close()
    assert not scratch.exists()


# --- what is allowed works ----------------------------------------------------------


def test_all_sixteen_ops_work_inside_the_roots(harness, layout):
    h = harness(FS_POLICY)
    assert h.call("fs.cwd") == "."
    assert h.call("fs.exists", path="data/readme.txt") is True
    assert h.call("fs.exists", path="data/nope") is False
    assert h.call("fs.is_file", path="data/readme.txt") is True
    assert h.call("fs.is_dir", path="data") is True
    assert h.call("fs.is_dir", path="data/readme.txt") is False
    assert h.call("fs.realpath", path="data/../data/./readme.txt") == "data/readme.txt"
    assert h.call("fs.read_text", path="data/readme.txt") == "public data"
    assert h.call("fs.read_bytes", path="data/readme.txt") == list(b"public data")
    assert h.call("fs.write_text", path="out/a.txt", data="héllo") is None
    assert (layout / "out" / "a.txt").read_text() == "héllo"
    h.call("fs.write_bytes", path="out/b.bin", data=[0, 1, 255])
    assert (layout / "out" / "b.bin").read_bytes() == b"\x00\x01\xff"
    h.call("fs.write_bytes", path="out/c.bin", data="abc")
    assert (layout / "out" / "c.bin").read_bytes() == b"abc"
    h.call("fs.append_text", path="out/a.txt", data=" world")
    assert h.call("fs.read_text", path="out/a.txt") == "héllo world"
    h.call("fs.mkdir", path="out/d1/d2/d3", recursive=True)
    h.call("fs.mkdir", path="out/d1/d2/d3", recursive=True)  # like mkdir -p
    h.call("fs.mkdir", path="out/single")
    assert h.call("fs.list_dir", path="out/d1") == ["d2"]
    h.call("fs.copy", src="data/readme.txt", dst="out/copy.txt")
    assert (layout / "out" / "copy.txt").read_text() == "public data"
    h.call("fs.copy", src="out/a.txt", dst="out/single")  # into a directory
    assert (layout / "out" / "single" / "a.txt").read_text() == "héllo world"
    h.call("fs.copy", src="out/d1", dst="out/d1copy")
    assert (layout / "out" / "d1copy" / "d2" / "d3").is_dir()
    h.call("fs.rename", src="out/copy.txt", dst="out/moved.txt")
    assert not (layout / "out" / "copy.txt").exists() and (layout / "out" / "moved.txt").exists()
    st = h.call("fs.stat", path="out/moved.txt")
    assert st["size"] == 11 and st["is_file"] and not st["is_dir"] and not st["is_symlink"]
    assert isinstance(st["mtime"], float) and st["mode"] == (layout / "out" / "moved.txt").stat().st_mode & 0o7777
    h.call("fs.remove", path="out/moved.txt")
    h.call("fs.remove", path="out/single", recursive=True)
    h.call("fs.remove", path="out/d1copy", recursive=True)
    assert h.call("fs.list_dir", path="out") == sorted(
        ["a.txt", "b.bin", "c.bin", "d1", "dangling_out", "dirlink", "link_out", "link_to_data", "mine.txt"]
    )
    assert all(e["decision"] == "allow" for e in h.audit)


def test_symlinks_inside_the_roots_are_followed_and_reported(harness, layout):
    h = harness(FS_POLICY)
    assert h.call("fs.read_text", path="out/link_to_data") == "public data"
    st = h.call("fs.stat", path="out/link_to_data")
    assert st["is_symlink"] and st["is_file"] and st["size"] == len("public data")
    assert h.call("fs.realpath", path="out/link_to_data") == "data/readme.txt"


def test_remove_and_rename_act_on_the_link_not_its_target(harness, layout, outside):
    h = harness(FS_POLICY)
    h.call("fs.remove", path="out/link_out")  # the link lives in out/, its target outside
    assert not (layout / "out" / "link_out").is_symlink()
    assert (outside / "secret.txt").read_text() == "TOP SECRET"
    h.call("fs.rename", src="out/dirlink", dst="out/renamed_link")
    assert (layout / "out" / "renamed_link").is_symlink() and (outside / "secret.txt").exists()
    # but through a trailing slash the target is meant, and that is outside
    assert "outside" in h.fails("fs.remove", path="out/renamed_link/", recursive=True).message


def test_copy_refuses_symlinks_inside_a_tree(harness, layout, outside):
    h = harness(FS_POLICY)
    (layout / "out" / "tree").mkdir()
    os.symlink(outside / "secret.txt", layout / "out" / "tree" / "leak")
    err = h.fails("fs.copy", src="out/tree", dst="out/tree2")
    assert isinstance(err, PermissionDenied) and "copy refuses symlinks" in err.message
    assert not (layout / "out" / "tree2").exists()


def test_copy_into_itself_is_refused(harness, layout):
    h = harness(FS_POLICY)
    (layout / "out" / "t").mkdir()
    assert "into itself" in h.fails("fs.copy", src="out/t", dst="out/t/inner").message


def test_mkdir_recursive_cannot_create_outside(harness, layout, tmp_path):
    h = harness({"filesystem": {"write": ["out/deep/root"]}})
    err = h.fails("fs.mkdir", path="out/deep/root/a", recursive=True)  # would create out/deep
    assert "would create directories outside the writable roots" in err.message
    assert not (layout / "out" / "deep").exists()
    (layout / "out" / "deep").mkdir()
    h.call("fs.mkdir", path="out/deep/root/a", recursive=True)  # creates the root itself, then a
    assert (layout / "out" / "deep" / "root" / "a").is_dir()
    err = h.fails("fs.mkdir", path="out/other/x", recursive=True)
    assert "outside the writable roots" in err.message


def test_missing_files_and_wrong_kinds(harness, layout):
    h = harness(FS_POLICY)
    assert isinstance(h.fails("fs.read_text", path="data/missing.txt"), NotFound)
    err = h.fails("fs.read_text", path="data")
    assert isinstance(err, HostIOError) and "is a directory" in err.message
    assert isinstance(h.fails("fs.remove", path="out/nothing"), NotFound)
    assert "already exists" in h.fails("fs.mkdir", path="out/mine.txt").message
    (layout / "out" / "full").mkdir()
    (layout / "out" / "full" / "f").write_text("x")
    assert "not empty" in h.fails("fs.remove", path="out/full").message


def test_fifo_cannot_hang_a_read(harness, layout):
    os.mkfifo(layout / "out" / "pipe")
    h = harness(FS_POLICY)
    err = h.fails("fs.read_text", path="out/pipe")
    assert isinstance(err, HostIOError) and "not a regular file" in err.message


def test_hard_links_are_not_written_through(harness, layout, outside):
    os.link(outside / "secret.txt", layout / "out" / "hard")
    h = harness(FS_POLICY)
    err = h.fails("fs.write_text", path="out/hard", data="overwritten")
    assert "several hard links" in err.message
    assert (outside / "secret.txt").read_text() == "TOP SECRET"


def test_read_and_write_caps(harness, layout):
    perms = {"filesystem": {"read": ["data"], "write": ["out"], "max_read_bytes": 100, "max_write_bytes": 50}}
    h = harness(perms)
    (layout / "data" / "big.txt").write_text("x" * 101)
    err = h.fails("fs.read_text", path="data/big.txt")
    assert isinstance(err, LimitHit) and "max_read_bytes (100 bytes)" in err.message
    err = h.fails("fs.write_text", path="out/w.txt", data="y" * 51)
    assert isinstance(err, LimitHit) and "max_write_bytes (50 bytes)" in err.message
    h.call("fs.write_text", path="out/w.txt", data="y" * 40)
    err = h.fails("fs.append_text", path="out/w.txt", data="y" * 20)
    assert isinstance(err, LimitHit) and "would exceed max_write_bytes" in err.message
    assert (layout / "out" / "w.txt").read_text() == "y" * 40


def test_invalid_arguments(harness, layout):
    h = harness(FS_POLICY)
    assert "argument 'path' must be str" in h.fails("fs.read_text", path=3).message
    assert "missing argument 'path'" in h.fails("fs.exists").message
    err = h.fails("fs.write_bytes", path="out/x", data=[1, 256])
    assert isinstance(err, InvalidArgument) and "0..255" in err.message
    err = h.fails("fs.write_bytes", path="out/x", data=[True])
    assert isinstance(err, InvalidArgument)


def test_symlink_swapped_in_after_the_check_is_not_followed(harness, layout, outside, monkeypatch):
    """A race: the policy resolved out/victim to a plain file, then it became a link out."""
    h = harness(FS_POLICY)
    (layout / "out" / "victim").write_text("mine")
    real_check = h.engine.check_fs

    def check_then_swap(op, path, *, write):
        result = real_check(op, path, write=write)
        os.unlink(layout / "out" / "victim")
        os.symlink(outside / "secret.txt", layout / "out" / "victim")
        return result

    monkeypatch.setattr(h.engine, "check_fs", check_then_swap)
    err = h.fails("fs.write_text", path="out/victim", data="pwned")
    assert (
        isinstance(err, PermissionDenied) and err.message == "filesystem: 'out/victim' became a symlink after the check"
    )
    # The race happened: the check allowed the plain file, then the swap; the write refused it.
    assert [(e["decision"], e["rule"]) for e in h.audit] == [("allow", "filesystem.write:out")]
    assert (layout / "out" / "victim").is_symlink()
    assert (outside / "secret.txt").read_text() == "TOP SECRET"


def test_directory_swapped_for_a_link_after_the_check_is_not_followed(harness, layout, outside, monkeypatch):
    h = harness(FS_POLICY)
    (layout / "out" / "sub").mkdir()
    real_check = h.engine.check_fs

    def check_then_swap(op, path, *, write):
        result = real_check(op, path, write=write)
        os.rmdir(layout / "out" / "sub")
        os.symlink(outside, layout / "out" / "sub")
        return result

    monkeypatch.setattr(h.engine, "check_fs", check_then_swap)
    err = h.fails("fs.write_text", path="out/sub/new.txt", data="pwned")
    # The checked directory is now a link: opening it as a directory without following it fails.
    assert isinstance(err, HostIOError)
    assert err.message == "fs.write_text: 'out/sub/new.txt': a component is not a directory"
    assert [(e["decision"], e["rule"]) for e in h.audit] == [("allow", "filesystem.write:out")]
    assert (layout / "out" / "sub").is_symlink()  # the race happened
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


FLIPPER = """
import os, sys
os.chdir(sys.argv[1])
open('out/ready', 'w').close()
flips = 0
while not os.path.exists('out/stop'):
    try:
        os.symlink('../../outside', 'out/d')
    except FileExistsError:
        pass
    os.unlink('out/d')
    flips += 1
print(flips)
"""


def test_a_path_changing_while_it_is_resolved_is_an_audited_denial(harness, layout, outside):
    """Another process creates and removes a link out at out/d while the policy resolves
    out/d/f: a walk that finds the link and then not its target is refused, on the record,
    as ``filesystem.unstable`` (it does not guess); no decision ever allows the outside."""
    (outside / "f").write_text("TOP SECRET")
    h = harness(FS_POLICY)
    flipper = subprocess.Popen([sys.executable, "-c", FLIPPER, str(layout)], stdout=subprocess.PIPE, text=True)
    seen: dict[str, int] = {}
    try:
        end = time.monotonic() + 30
        while not (layout / "out" / "ready").exists() and time.monotonic() < end:
            time.sleep(0.01)
        while time.monotonic() < end and "filesystem.unstable" not in seen:
            try:
                real = h.engine.check_fs("read_text", "out/d/f", write=False)
            except PermissionDenied as err:
                seen[err.rule] = seen.get(err.rule, 0) + 1
                if err.rule == "filesystem.unstable":
                    assert err.message.startswith("filesystem: 'out/d/f' changed while it was being resolved (")
            else:
                assert real.is_relative_to(layout / "out"), real  # decided while out/d was absent
                seen["allow"] = seen.get("allow", 0) + 1
    finally:
        (layout / "out" / "stop").touch()
        flips = int(flipper.communicate(timeout=30)[0])
    assert flips > 0, "the link was never flipped: no race"
    assert seen.get("filesystem.unstable") == 1, seen
    assert set(seen) <= {"allow", "filesystem.outside-roots", "filesystem.unstable"}, seen
    unstable = [e for e in h.audit if e["rule"] == "filesystem.unstable"]
    assert [(e["decision"], e["request"]["path"]) for e in unstable] == [("deny", "out/d/f")]


def test_checks_are_safe_from_many_threads(harness, layout):
    h = harness(FS_POLICY)
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(20):
                h.call("fs.write_text", path=f"out/t{n}_{i}", data=str(i))
                assert h.call("fs.read_text", path=f"out/t{n}_{i}") == str(i)
                h.fails("fs.read_text", path="../outside/secret.txt")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors
    assert h.engine.denials == 80
    assert len(h.audit) == 4 * 20 * 3


def test_bytes_ops_take_and_give_a_list_or_base64(harness):
    """fs.read_bytes/write_bytes: a list of 0..255 (the first form) or base64 (what the
    JS and Python guests send: tests/runtime/test_fs_bytes.py), both exact."""
    DATA = bytes(range(256)) * 4
    h = harness({"filesystem": {"read": ["."], "write": ["."]}})
    (h.root / "f.bin").write_bytes(DATA[:1000])
    assert h.call("fs.read_bytes", path="f.bin") == list(DATA[:1000])
    assert base64.b64decode(h.call("fs.read_bytes", path="f.bin", encoding="base64")) == DATA[:1000]
    h.call("fs.write_bytes", path="g.bin", data_base64=base64.b64encode(DATA[:500]).decode())
    assert (h.root / "g.bin").read_bytes() == DATA[:500]
    h.call("fs.write_bytes", path="h.bin", data=list(DATA[:10]))
    assert (h.root / "h.bin").read_bytes() == DATA[:10]
    for bad in (
        {"encoding": "hex"},
        {"data": "a", "data_base64": "YQ=="},
        {"data": [1], "data_base64": "YQ=="},
        {"data_base64": "no base64!"},
        {"data": 5},
        {},
    ):
        op = "fs.read_bytes" if "encoding" in bad else "fs.write_bytes"
        with pytest.raises(InvalidArgument):
            h.call(op, path="x.bin", **bad)
