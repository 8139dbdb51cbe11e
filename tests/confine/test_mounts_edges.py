"""The launcher's mount view (hugind/confine/mounts.py), built in this process and looked at.

``make_root`` is run in a thread of the test process that first took a mount namespace of
its own (``unshare(CLONE_NEWNS)`` applies to the calling thread, and implies ``CLONE_FS``:
its root and cwd are its own). The thread builds the view, enters it (``pivot_root``) and
reports what it sees: which paths exist, which are writable, the flags of each mount, the
devices, the hidden files. The rest of the process keeps the host's view (checked after).
Running in-process (not in a launcher child) lets a mutation tester attribute these tests
to mounts.py; the launcher's own tests run the same code in children.

Needs root (or CAP_SYS_ADMIN) for the namespace; skipped with the reason otherwise.
"""

from __future__ import annotations

import ctypes
import errno
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hugind.confine import mounts

CLONE_NEWNS = 0x00020000
MS_REC, MS_PRIVATE = 0x4000, 1 << 18
ST_RDONLY, ST_NOSUID, ST_NODEV, ST_NOEXEC = 1, 2, 4, 8


def in_own_mount_namespace(work: Callable[[], Any]) -> Any:
    """``work()`` in a thread with a mount namespace (and cwd, root) of its own."""
    libc = ctypes.CDLL(None, use_errno=True)
    out: dict[str, Any] = {}

    def run() -> None:
        if libc.unshare(CLONE_NEWNS) != 0:
            out["skip"] = f"unshare(CLONE_NEWNS): {os.strerror(ctypes.get_errno())}"
            return
        # Private before anything is mounted, by this test itself (not by the code under test,
        # which a mutation tester breaks on purpose): no mount made here reaches the host.
        if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
            out["error"] = OSError(ctypes.get_errno(), "making the thread's mounts private failed")
            return
        try:
            out["value"] = work()
        except BaseException as exc:
            out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "the view thread hung"
    if "skip" in out:
        pytest.skip(out["skip"])
    if "error" in out:
        raise out["error"]
    return out["value"]


def flags(path: str) -> set[str]:
    f = os.statvfs(path).f_flag
    return {
        n
        for n, bit in (("ro", ST_RDONLY), ("nosuid", ST_NOSUID), ("nodev", ST_NODEV), ("noexec", ST_NOEXEC))
        if f & bit
    }


def try_read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError as exc:
        return errno.errorcode[exc.errno]


def may_write(path: str) -> str:
    """access(path, W_OK): "OK" or the errno (EROFS on a read-only mount), writing nothing."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.access(path.encode(), os.W_OK) == 0:
        return "OK"
    return errno.errorcode[ctypes.get_errno()]


def try_write(path: str) -> str:
    try:
        with open(path, "w") as f:
            f.write("x")
    except OSError as exc:
        return errno.errorcode[exc.errno]
    return "OK"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    if os.geteuid() != 0:
        pytest.skip("building a mount view needs root here")
    (tmp_path / "ro" / "sub").mkdir(parents=True)
    (tmp_path / "ro" / "file").write_text("read me")
    (tmp_path / "ro" / "secret").write_text("hidden")
    (tmp_path / "ro" / "sub" / "inner").write_text("inner")
    (tmp_path / "ro" / "hidden_dir").mkdir()
    (tmp_path / "ro" / "hidden_dir" / "x").write_text("x")
    (tmp_path / "rw").mkdir()
    (tmp_path / "not-granted").mkdir()
    return tmp_path


def test_the_view_holds_exactly_the_grants_with_their_flags(tree: Path):
    ro, rw = str(tree / "ro"), str(tree / "rw")

    def look() -> dict[str, Any]:
        os.chdir(ro)  # this thread's cwd: make_root returns to it inside the view
        tmp = mounts.make_root(
            [ro, "/usr", str(tree / "vanished")],
            [rw],
            [f"{ro}/secret", f"{ro}/hidden_dir", f"{ro}/not-there"],
            1 << 20,
        )
        return {
            "tmp": tmp,
            "cwd": os.getcwd(),
            "root": sorted(os.listdir("/")),
            "read": Path(f"{ro}/file").read_text(),
            "deep": Path(f"{ro}/sub/inner").read_text(),
            "write ro": try_write(f"{ro}/new"),
            "write rw": try_write(f"{rw}/new"),
            "write tmp": try_write("/tmp/new"),
            "write var tmp": try_write("/var/tmp/new"),
            "write /": try_write("/new"),
            "not granted": os.path.lexists(str(tree / "not-granted")),
            "vanished": os.path.lexists(str(tree / "vanished")),
            "secret": try_read(f"{ro}/secret"),
            "hidden dir": os.listdir(f"{ro}/hidden_dir"),
            "write hidden dir": try_write(f"{ro}/hidden_dir/y"),
            "dev": sorted(os.listdir("/dev")),
            "write dev": try_write("/dev/new"),
            "write dev null": try_write("/dev/null"),
            "proc": os.listdir("/proc"),
            "write proc": try_write("/proc/new"),
            "links": {d: os.readlink(d) for d in mounts.SYSTEM_LINKS if os.path.islink(d)},
            "flags": {p: flags(p) for p in (ro, rw, "/tmp", "/dev", "/proc", f"{ro}/hidden_dir", "/usr", "/")},
            "sys": os.path.lexists("/sys"),
        }

    seen = in_own_mount_namespace(look)
    assert seen["tmp"] == ["/tmp", "/var/tmp"]
    assert seen["cwd"] == ro
    host_links = {d: os.readlink(d) for d in mounts.SYSTEM_LINKS if os.path.islink(d)}
    assert seen["links"] == host_links  # merged-/usr links made again, pointing where they did
    assert set(seen["root"]) == {"tmp", "usr", "dev", "proc", "var", *(d.lstrip("/") for d in host_links)}
    assert (seen["read"], seen["deep"]) == ("read me", "inner")
    assert seen["write ro"] == "EROFS" and seen["write rw"] == "OK"
    assert (tree / "rw" / "new").read_text() == "x"  # the writable root is the host's directory
    assert (seen["write tmp"], seen["write var tmp"]) == ("OK", "OK")
    assert not Path("/tmp/new").exists() or Path("/tmp/new").read_text() != "x"  # a private /tmp
    assert seen["write /"] == "EROFS"  # without "/" granted, the view's own root is read-only
    assert (seen["not granted"], seen["vanished"], seen["sys"]) == (False, False, False)
    # A hidden file is /dev/null bound nodev: opening it is refused, its content never shown.
    assert seen["secret"] == "EACCES" and seen["hidden dir"] == []
    assert seen["write hidden dir"] == "EROFS"
    assert seen["dev"] == sorted(d.removeprefix("/dev/") for d in mounts.DEVICES)
    assert (seen["write dev"], seen["write dev null"]) == ("EROFS", "OK")
    assert (seen["proc"], seen["write proc"]) == ([], "EROFS")
    f = seen["flags"]
    assert f[ro] == f["/usr"] == {"ro", "nosuid", "nodev"}
    assert f[rw] == {"nosuid", "nodev"}
    assert f["/tmp"] == {"nosuid", "nodev"}
    assert f["/dev"] == {"ro", "nosuid", "noexec"}
    assert f["/proc"] == f[f"{ro}/hidden_dir"] == {"ro", "nosuid", "nodev", "noexec"}
    assert "ro" in f["/"]
    # The rest of the process never left the host's view.
    assert Path("/proc/self/status").exists() and (tree / "not-granted").is_dir()


def test_granting_slash_covers_sys_and_run_and_keeps_root_writable_as_granted(tree: Path):
    def look() -> dict[str, Any]:
        os.chdir("/")
        tmp = mounts.make_root(["/"], [str(tree / "rw")], [], 1 << 20)
        return {
            "tmp": tmp,
            "sys": os.listdir("/sys") if os.path.isdir("/sys") else None,
            "run": os.listdir("/run") if os.path.isdir("/run") else None,
            "etc": os.path.exists("/etc/hostname") or os.path.isdir("/etc"),
            "not granted is there": os.path.isdir(str(tree / "not-granted")),
            # Asked, not tried: "/" is the host's own root bound here, and a broken view (a
            # mutant) must not leave a file on the host.
            "root writable": may_write("/"),
            "root flags": flags("/"),
            "write rw": try_write(str(tree / "rw" / "f")),
            "proc": os.listdir("/proc"),
        }

    seen = in_own_mount_namespace(look)
    assert seen["tmp"] == ["/tmp", "/var/tmp"]
    host_sys, host_run = os.path.isdir("/sys"), os.path.isdir("/run")
    assert seen["sys"] == ([] if host_sys else None)
    assert seen["run"] == ([] if host_run else None)
    assert seen["etc"] is True
    # tmp_path lives under /tmp, which the view replaces by a private tmpfs: not there.
    assert seen["not granted is there"] is (not str(tree).startswith(("/tmp/", "/var/tmp/")))
    assert seen["root writable"] == "EROFS" and "ro" in seen["root flags"]  # "/" granted read-only
    assert seen["write rw"] == "OK"
    assert seen["proc"] == []


def test_depth_orders_parents_first():
    assert [mounts._depth(p) for p in ("/", "/a", "/a/", "/a/b", "/a/b/c/")] == [0, 1, 1, 2, 3]


def test_a_failed_mount_names_the_target_and_the_errno():
    with pytest.raises(OSError) as failed:
        mounts.mount(None, "/hugind-no-such-mountpoint", None, mounts.MS_BIND)
    assert failed.value.errno == errno.ENOENT
    assert failed.value.strerror == f"mount /hugind-no-such-mountpoint failed: {os.strerror(errno.ENOENT)}"
    with pytest.raises(OSError) as failed:
        mounts.mount_setattr("/hugind-no-such-mountpoint", 0, mounts.MOUNT_ATTR_RDONLY, 0)
    assert failed.value.errno == errno.ENOENT
    assert failed.value.strerror.startswith("mount_setattr(/hugind-no-such-mountpoint) failed: ")


def test_mounts_inside_a_granted_tree_get_the_tree_s_flags(tree: Path):
    """A granted directory that holds another mount (here a tmpfs, mounted in this thread's
    namespace only) is bound with it, and the flags reach it too: read-only under a read
    root, nosuid and nodev under both, writable under a write root."""
    ro, rw = tree / "ro", tree / "rw"
    (rw / "sub").mkdir()

    def look() -> dict[str, Any]:
        for where, data in ((ro / "sub", "size=64k"), (rw / "sub", "size=64k")):
            mounts.mount("tmpfs", str(where), "tmpfs", 0, data)
        mounts.mount_setattr(str(rw / "sub"), 0, mounts.MOUNT_ATTR_RDONLY, 0)  # read-only before
        os.chdir(str(ro))
        mounts.make_root([str(ro)], [str(rw)], [], 1 << 20)
        return {
            "ro sub": flags(str(ro / "sub")),
            "rw sub": flags(str(rw / "sub")),
            "write ro sub": try_write(str(ro / "sub" / "f")),
            "write rw sub": try_write(str(rw / "sub" / "f")),
        }

    seen = in_own_mount_namespace(look)
    assert seen["ro sub"] == {"ro", "nosuid", "nodev"} and seen["write ro sub"] == "EROFS"
    assert seen["rw sub"] == {"nosuid", "nodev"} and seen["write rw sub"] == "OK"
