"""hugind/policy/fs.py at its edges: exact rules and messages, limits, and how paths resolve.

Written against the survivors of a mutation run (bench/mutation.py policy.fs): each test pins a
behaviour a one-token change of fs.py used to leave unnoticed. The boundary is built directly
(``Boundary``), so a root may hold hugind's own files here, as the second line must handle.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hugind.policy.boundary import Boundary
from hugind.policy.fs import (
    MAX_NAME_BYTES,
    MAX_PATH_BYTES,
    _open_canonical,
    check_syntax,
    decide_fs,
    decide_read_held,
    may_write,
    resolve,
    resolve_held,
)
from hugind.policy.model import Denied, FsPolicy, FsRoot


def view_of(tmp: Path, mode: str = "read-write", read=("data",), write=("out",), internal=()) -> Boundary:
    for name in (*read, *write):
        (tmp / name).mkdir(exist_ok=True)
    policy = FsPolicy(
        mode=mode,
        read=tuple(FsRoot(n, tmp / n) for n in read),
        write=tuple(FsRoot(n, tmp / n) for n in write),
    )
    return Boundary(policy, tmp, None, tuple(internal))


def denied(call, *args, **kw) -> Denied:
    with pytest.raises(Denied) as caught:
        call(*args, **kw)
    return caught.value


# --- syntax --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("", "filesystem: path must be a non-empty string"),
        (None, "filesystem: path must be a non-empty string"),
        (b"data", "filesystem: path must be a non-empty string"),
        ("a\0b", "filesystem: path contains a NUL byte"),
        ("bad\udc80name", "filesystem: path is not valid Unicode"),
        ("a/" * 2048 + "b", f"filesystem: path longer than {MAX_PATH_BYTES} bytes"),
        ("x/" + "n" * 256, f"filesystem: path component over {MAX_NAME_BYTES} bytes"),
    ],
    ids=["empty", "none", "bytes", "nul", "surrogate", "4097-bytes", "256-byte-name"],
)
def test_bad_syntax_is_refused_with_its_exact_reason(path, message):
    err = denied(check_syntax, path)
    assert (err.rule, err.message) == ("filesystem.path-syntax", message)


@pytest.mark.parametrize(
    "path",
    [
        "a/" * 2047 + "bb",  # exactly MAX_PATH_BYTES
        "x/" + "n" * 255,  # a component of exactly MAX_NAME_BYTES
        "a" * 200 + "/" + "b" * 200,  # longer than a name, no component over one
        "a b/" * 100,  # spaces are not separators
        "é" * 127,  # 254 bytes in one component
    ],
    ids=["4096-bytes", "255-byte-name", "two-200-byte-names", "spaces", "utf8"],
)
def test_paths_at_the_limits_are_accepted(path):
    assert check_syntax(path) == path


# --- rules and messages ----------------------------------------------------------------------


def test_read_only_mode_refuses_a_write_by_its_own_rule(tmp_path):
    view = view_of(tmp_path, mode="read-only")
    err = denied(decide_fs, view, "fs.write_text", "out/f", write=True)
    assert (err.rule, err.message) == (
        "filesystem.read-only",
        "filesystem: write_text 'out/f' denied: runtime_fs_mode read-only",
    )


def test_outside_the_roots_names_every_root_once_or_none(tmp_path):
    view = view_of(tmp_path, read=("data", "more"), write=("out",))
    err = denied(decide_fs, view, "fs.read_text", "/etc/hostname", write=False)
    assert err.message == "filesystem: read_text '/etc/hostname' denied: outside the readable roots (data, more, out)"
    no_write = view_of(tmp_path, read=("data",), write=())
    err = denied(decide_fs, no_write, "fs.write_text", "data/f", write=True)
    assert (err.rule, err.message) == (
        "filesystem.outside-roots",
        "filesystem: write_text 'data/f' denied: outside the writable roots (none configured)",
    )


def test_hugind_files_inside_a_root_are_refused_with_the_whole_reason(tmp_path):
    view = view_of(tmp_path, internal=(tmp_path / "out" / "cache",))
    (tmp_path / "out" / "cache").mkdir()
    err = denied(decide_fs, view, "fs.read_text", "out/cache/key", write=False)
    assert (err.rule, err.message) == (
        "filesystem.internal",
        "filesystem: read_text 'out/cache/key' denied: hugind's own files (cache, engine, backend config, "
        "saved sessions, audit log) and their parents are never reachable",
    )


def test_may_write_refuses_a_parent_of_hugind_files_and_allows_beside_it(tmp_path):
    view = view_of(tmp_path, internal=(tmp_path / "out" / "cache",))
    assert may_write(view, tmp_path / "out") is False  # moving it would carry the cache along
    assert may_write(view, tmp_path / "out" / "cache" / "x") is False
    assert may_write(view, tmp_path / "out" / "other") is True
    assert may_write(view, tmp_path / "data" / "x") is False  # a read root only


def test_entry_ops_decided_as_reads_name_the_read_rule(tmp_path):
    """``rename``/``remove`` take the second road of ``_rule_for`` (the root itself is refused
    there): a read decision on them still names the read rule of its root."""
    view = view_of(tmp_path)
    assert decide_fs(view, "fs.rename", "data/a", write=False)[1] == "filesystem.read:data"
    assert decide_fs(view, "fs.remove", "out/a", write=True)[1] == "filesystem.write:out"
    err = denied(decide_fs, view, "fs.remove", "out", write=True)
    assert (err.rule, err.message) == (
        "filesystem.root",
        "filesystem: remove 'out' denied: it is the allowed root itself",
    )


def test_of_two_roots_on_one_path_the_first_listed_decides(tmp_path):
    (tmp_path / "data").mkdir()
    policy = FsPolicy(mode="read-only", read=(FsRoot("data", tmp_path / "data"), FsRoot("./data/", tmp_path / "data")))
    view = Boundary(policy, tmp_path, None, ())
    assert decide_fs(view, "fs.read_text", "data/f", write=False)[1] == "filesystem.read:data"


# --- decide_read_held --------------------------------------------------------------------------


def test_held_reads_work_in_read_only_mode_and_name_the_op_when_refused(tmp_path):
    view = view_of(tmp_path, mode="read-only")
    (tmp_path / "data" / "f").write_text("x")
    real, rule, fd = decide_read_held(view, "fs.read_text", "data/f")
    try:
        assert (real, rule) == (str(tmp_path / "data" / "f"), "filesystem.read:data")
        assert fd is not None and os.path.samestat(os.fstat(fd), os.stat(tmp_path / "data" / "f"))
    finally:
        os.close(fd)
    err = denied(decide_read_held, view, "fs.stat", "/etc/hostname")
    assert err.message.startswith("filesystem: stat '/etc/hostname' denied: outside the readable roots")


def test_held_reads_refuse_entry_ops_saying_why(tmp_path):
    with pytest.raises(ValueError, match=r"^fs\.lstat acts on the entry, not on what it points to$"):
        decide_read_held(view_of(tmp_path), "fs.lstat", "data/f")


# --- resolving -----------------------------------------------------------------------------------


def test_resolve_follows_the_last_link_unless_told_not_to(tmp_path):
    (tmp_path / "target").mkdir()
    os.symlink("target", tmp_path / "link")
    assert resolve("link", tmp_path) == tmp_path / "target"
    assert resolve("link", tmp_path, follow_last=False) == tmp_path / "link"
    (tmp_path / "target" / "sub").mkdir()
    # ".." as the last component is resolved, not kept: "link/sub/.." is the link's target.
    assert resolve("link/sub/..", tmp_path, follow_last=False) == tmp_path / "target"


def test_resolve_held_takes_a_str_or_a_path_cwd(tmp_path):
    (tmp_path / "f").write_text("x")
    for cwd in (str(tmp_path), tmp_path, str(tmp_path) + "/"):
        real, fd = resolve_held("f", cwd)
        assert real == str(tmp_path / "f") and fd is not None
        os.close(fd)
    assert resolve_held("absent", tmp_path) == (str(tmp_path / "absent"), None)
    real, fd = resolve_held("etc", "/")
    assert real == "/etc" and fd is not None
    os.close(fd)


def test_absent_names_resolve_to_their_directory_plus_the_name(tmp_path):
    assert resolve_held("/hugind-no-such-entry", "/") == ("/hugind-no-such-entry", None)
    (tmp_path / "boX").mkdir()  # a directory name ending in a character a strip could eat
    assert resolve_held("boX/absent", str(tmp_path)) == (f"{tmp_path}/boX/absent", None)
    os.symlink("boX", tmp_path / "to_box")
    assert resolve_held("to_box/absent", str(tmp_path)) == (f"{tmp_path}/boX/absent", None)


def test_only_objects_with_a_plain_canonical_path_are_held(tmp_path):
    # A namespace file's fd links to "net:[...]", not to a path: not held, resolved by hand.
    assert _open_canonical("/proc/self/ns/net") is None
    # A name ending like the kernel's mark of an unlinked file cannot be told apart from one.
    marked = tmp_path / "file (deleted)"
    marked.write_text("x")
    assert _open_canonical(str(marked)) is None
    assert resolve_held(str(marked), "/") == (str(marked), None)
    plain = tmp_path / "file"
    plain.write_text("x")
    held = _open_canonical(str(plain))
    assert held is not None and held[0] == str(plain)
    os.close(held[1])


FLIPPER = """\
import os, sys
os.chdir(sys.argv[1])
open('out/ready', 'w').close()
while not os.path.exists('out/stop'):
    try:
        os.symlink('../../outside', 'out/d')
    except FileExistsError:
        pass
    os.unlink('out/d')
"""


def test_a_held_read_of_a_path_changing_while_it_is_resolved_is_refused_as_unstable(tmp_path):
    """The held road (``resolve_held``) refuses a path that changed mid-walk as
    ``filesystem.unstable``, naming the path as given and the errno; bounded attempts."""
    root = tmp_path / "agent"
    root.mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "f").write_text("TOP SECRET")
    view = view_of(root, read=(), write=("out",))
    flipper = subprocess.Popen([sys.executable, "-c", FLIPPER, str(root)])
    unstable: list[Denied] = []
    attempts = 0
    try:
        end = time.monotonic() + 20
        while not (root / "out" / "ready").exists() and time.monotonic() < end:
            time.sleep(0.01)
        while time.monotonic() < end and not unstable:
            attempts += 1
            try:
                real, _rule, fd = decide_read_held(view, "fs.read_text", "out/d/f")
            except Denied as err:
                if err.rule == "filesystem.unstable":
                    unstable.append(err)
                else:
                    assert err.rule == "filesystem.outside-roots", err.rule
            else:
                assert real.startswith(str(root / "out")) and fd is None, real
    finally:
        (root / "out" / "stop").touch()
        flipper.wait(timeout=30)
    if not unstable:
        pytest.skip(f"the link never changed during a check in {attempts} attempts")
    message = unstable[0].message
    assert message.startswith("filesystem: 'out/d/f' changed while it was being resolved ("), message
    assert message.endswith(")") and message[message.index("(") + 1 : -1] in {
        os.strerror(n)
        for n in (2, 20, 40)  # ENOENT, ENOTDIR, ELOOP
    }, message
