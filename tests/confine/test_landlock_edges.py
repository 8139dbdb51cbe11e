"""hugind/confine/landlock.py run in this process: a Landlock domain on one thread, then probed.

``landlock_restrict_self`` (without flags) and ``PR_SET_NO_NEW_PRIVS`` apply to the calling
thread only: a thread of the test process builds a ``Ruleset``, restricts itself, tries to
read, write, list, connect and bind, and reports each errno; the rest of the process (pytest)
stays unrestricted, and the domain ends with the thread. In-process, so a mutation tester
can attribute these tests to landlock.py (the launcher and the zygote use it in children).

Skipped, with the reason, where the kernel has no Landlock.
"""

from __future__ import annotations

import ctypes
import errno
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hugind.confine import landlock
from hugind.confine.landlock import (
    FILE_ONLY,
    IOCTL_DEV,
    MAKE_BLOCK,
    MAKE_CHAR,
    NET_BIND_TCP,
    NET_CONNECT_TCP,
    READ,
    READ_FILE,
    REFER,
    TRUNCATE,
    WRITE_FILE,
    LandlockError,
    Ruleset,
    abi_version,
    carve,
    handled_fs,
    write_access,
)


def kernel_abi() -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return max(0, int(libc.syscall(444, None, ctypes.c_size_t(0), 1)))  # LANDLOCK_CREATE_RULESET_VERSION


@pytest.fixture(scope="module")
def abi() -> int:
    found = kernel_abi()
    if found < 1:
        pytest.skip("this kernel has no Landlock")
    return found


def on_a_restricted_thread(build: Callable[[], Ruleset], probe: Callable[[], Any]) -> Any:
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            ruleset = build()
            ruleset.restrict_self()
            out["value"] = probe()
        except BaseException as exc:
            out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    assert not thread.is_alive()
    if "error" in out:
        raise out["error"]
    return out["value"]


def attempt(action: Callable[[], Any]) -> str:
    try:
        action()
    except OSError as exc:
        return errno.errorcode[exc.errno]
    return "OK"


def test_abi_and_access_masks():
    assert abi_version() == kernel_abi()
    assert handled_fs(1) == (1 << 13) - 1
    assert handled_fs(2) == (1 << 13) - 1 | REFER
    assert handled_fs(3) == handled_fs(4) == (1 << 13) - 1 | REFER | TRUNCATE
    assert handled_fs(5) == handled_fs(7) == (1 << 16) - 1
    assert handled_fs(5) & IOCTL_DEV and not handled_fs(4) & IOCTL_DEV
    for level in (1, 3, 5):
        assert write_access(level) == handled_fs(level) & ~(MAKE_CHAR | MAKE_BLOCK)
        assert not write_access(level) & (MAKE_CHAR | MAKE_BLOCK)


def test_carve_grants_around_hidden_paths(tmp_path):
    for name in ("a/x", "a/y", "bX/z", "c"):
        (tmp_path / name).mkdir(parents=True)
    root = str(tmp_path)
    assert carve(root, []) == [root]
    assert carve(root, [f"{root}/a/x"]) == [f"{root}/a/y", f"{root}/bX", f"{root}/c"]
    assert carve(root, [f"{root}/bX/z"]) == [f"{root}/a", f"{root}/c"]  # a name ending in X
    assert carve(f"{root}/bX", [f"{root}/bX/z"]) == []
    assert carve(f"{root}/bX/z", [f"{root}/bX"]) == []  # inside what is hidden
    assert carve(f"{root}/bX/z", [f"{root}/bX/"]) == []
    assert carve("/", ["/proc"]) == [f"/{n}" for n in sorted(os.listdir("/")) if n != "proc"]
    assert carve(root, [f"{root}-other/a"]) == [root]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for name in ("ro", "rw", "out"):
        (tmp_path / name).mkdir()
    (tmp_path / "ro" / "f").write_text("ro")
    (tmp_path / "out" / "f").write_text("out")
    (tmp_path / "one").write_text("one file")
    return tmp_path


def test_a_domain_grants_exactly_its_rules(abi, tree):
    ro, rw, one = tree / "ro", tree / "rw", tree / "one"

    def build() -> Ruleset:
        ruleset = Ruleset(abi, restrict_tcp=False, scope=False)
        ruleset.allow_path(str(ro), READ)
        ruleset.allow_path(str(rw), write_access(abi) | READ)
        # A file given directory rights: they are masked to what a file takes (else EINVAL).
        ruleset.allow_path(str(one), READ | WRITE_FILE | landlock.MAKE_DIR)
        ruleset.allow_path(str(tree / "vanished"), READ)  # nothing to grant, no error
        return ruleset

    def probe() -> dict[str, str]:
        return {
            "read ro": attempt(lambda: (ro / "f").read_text()),
            "list ro": attempt(lambda: os.listdir(ro)),
            "write ro": attempt(lambda: (ro / "f").write_text("x")),
            "create ro": attempt(lambda: (ro / "new").write_text("x")),
            "create rw": attempt(lambda: (rw / "new").write_text("x")),
            "mkdir rw": attempt(lambda: (rw / "sub").mkdir()),
            "remove rw": attempt(lambda: (rw / "new").unlink()),
            "read one": attempt(lambda: one.read_text()),
            "write one": attempt(lambda: one.open("a").close()),
            "read out": attempt(lambda: (tree / "out" / "f").read_text()),
            "list out": attempt(lambda: os.listdir(tree / "out")),
        }

    seen = on_a_restricted_thread(build, probe)
    assert seen == {
        "read ro": "OK",
        "list ro": "OK",
        "write ro": "EACCES",
        "create ro": "EACCES",
        "create rw": "OK",
        "mkdir rw": "OK",
        "remove rw": "OK",
        "read one": "OK",
        "write one": "OK",
        "read out": "EACCES",
        "list out": "EACCES",
    }
    assert (tree / "out" / "f").read_text() == "out"  # this thread was never restricted
    assert FILE_ONLY & READ_FILE and not FILE_ONLY & landlock.MAKE_DIR


def test_without_handled_files_a_domain_leaves_them_alone(abi, tree):
    if abi < 6:
        pytest.skip(f"Landlock ABI {abi}: a domain without file rights needs scoping (ABI 6)")
    seen = on_a_restricted_thread(
        lambda: Ruleset(abi, restrict_tcp=False, scope=True, handle_fs=False),
        lambda: attempt(lambda: (tree / "out" / "f").read_text()),
    )
    assert seen == "OK"


def test_tcp_is_refused_but_for_the_granted_port(abi, tree):
    if abi < 4:
        pytest.skip(f"Landlock ABI {abi} has no TCP rules")
    granted, other = socket.socket(), socket.socket()
    for s in (granted, other):
        s.bind(("127.0.0.1", 0))
        s.listen(1)
    try:

        def build() -> Ruleset:
            ruleset = Ruleset(abi, restrict_tcp=True, scope=False, handle_fs=False)
            ruleset.allow_tcp_port(granted.getsockname()[1], NET_CONNECT_TCP)
            return ruleset

        def connect(port: int) -> None:
            with socket.create_connection(("127.0.0.1", port), timeout=5):
                pass

        def bind() -> None:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))

        seen = on_a_restricted_thread(
            build,
            lambda: {
                "granted": attempt(lambda: connect(granted.getsockname()[1])),
                "other": attempt(lambda: connect(other.getsockname()[1])),
                "bind": attempt(bind),
            },
        )
    finally:
        granted.close()
        other.close()
    assert seen == {"granted": "OK", "other": "EACCES", "bind": "EACCES"}  # binding handled, no port granted


def test_without_restrict_tcp_connects_are_not_handled(abi, tree):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        seen = on_a_restricted_thread(
            lambda: Ruleset(abi, restrict_tcp=False, scope=False),
            lambda: attempt(lambda: socket.create_connection(("127.0.0.1", port), timeout=5).close()),
        )
    assert seen == "OK"


def test_a_tcp_rule_on_an_unhandled_ruleset_fails_naming_the_port(abi):
    if abi < 4:
        pytest.skip(f"Landlock ABI {abi} has no TCP rules")
    ruleset = Ruleset(abi, restrict_tcp=False, scope=False)
    try:
        with pytest.raises(LandlockError) as failed:
            ruleset.allow_tcp_port(8080, NET_CONNECT_TCP | NET_BIND_TCP)
        assert failed.value.errno == errno.EINVAL
        assert failed.value.strerror == "landlock_add_rule failed for TCP port 8080"
    finally:
        os.close(ruleset.fd)


def test_a_path_rule_with_unhandled_rights_fails_naming_the_path(abi, tree):
    if abi < 4:
        pytest.skip(f"Landlock ABI {abi}: a domain without file rights needs TCP rules (ABI 4)")
    ruleset = Ruleset(abi, restrict_tcp=True, scope=False, handle_fs=False)
    try:
        with pytest.raises(LandlockError) as failed:
            ruleset.allow_path(str(tree / "ro"), READ)
        assert failed.value.errno == errno.EINVAL
        assert failed.value.strerror == f"landlock_add_rule failed for {tree / 'ro'}"
    finally:
        os.close(ruleset.fd)


def test_scoped_domains_cannot_reach_an_abstract_socket_outside(abi):
    if abi < 6:
        pytest.skip(f"Landlock ABI {abi} does not scope abstract sockets")
    name = f"\0hugind-landlock-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(name)
        server.listen(1)

        def reach() -> str:
            with socket.socket(socket.AF_UNIX) as client:
                return attempt(lambda: client.connect(name))

        scoped = on_a_restricted_thread(lambda: Ruleset(abi, restrict_tcp=False, scope=True, handle_fs=False), reach)
        unscoped = on_a_restricted_thread(lambda: Ruleset(abi, restrict_tcp=False, scope=False), reach)
    assert (scoped, unscoped) == ("EPERM", "OK")


def test_a_ruleset_for_an_older_abi_still_restricts(abi, tree):
    seen = on_a_restricted_thread(
        lambda: Ruleset(1, restrict_tcp=True, scope=True),
        lambda: attempt(lambda: (tree / "out" / "f").read_text()),
    )
    assert seen == "EACCES"


def test_a_ruleset_that_handles_nothing_is_refused_by_the_kernel(abi):
    with pytest.raises(LandlockError) as failed:
        Ruleset(abi, restrict_tcp=False, scope=False, handle_fs=False)
    assert failed.value.errno == errno.ENOMSG
    assert failed.value.strerror == "landlock_create_ruleset failed"


PR_GET_NO_NEW_PRIVS = 39


def no_new_privs() -> int:
    return ctypes.CDLL(None, use_errno=True).prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)


def test_restricting_sets_no_new_privs_on_the_thread(abi, tree):
    """Root could restrict itself without it (CAP_SYS_ADMIN); the launcher's child must still
    not gain privileges by executing a setuid program."""
    assert on_a_restricted_thread(lambda: Ruleset(abi, restrict_tcp=False, scope=False), no_new_privs) == 1


def test_file_rules_give_a_file_no_more_than_asked(abi, tree):
    fifo = tree / "fifo"
    os.mkfifo(fifo)
    (tree / "two").write_text("two")

    def build() -> Ruleset:
        ruleset = Ruleset(abi, restrict_tcp=False, scope=False)
        ruleset.allow_path(str(tree / "two"), READ)
        ruleset.allow_path(str(fifo), READ | WRITE_FILE)  # opened O_PATH: no reader, no block
        return ruleset

    def probe() -> dict[str, str]:
        return {
            "read two": attempt(lambda: (tree / "two").read_text()),
            "write two": attempt(lambda: (tree / "two").open("a").close()),
            "fifo": attempt(lambda: os.close(os.open(fifo, os.O_RDWR | os.O_NONBLOCK))),
        }

    assert on_a_restricted_thread(build, probe) == {"read two": "OK", "write two": "EACCES", "fifo": "OK"}


def test_an_abi_4_ruleset_restricts_tcp_and_an_abi_6_one_scopes(abi):
    if abi < 6:
        pytest.skip(f"Landlock ABI {abi}")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        tcp = on_a_restricted_thread(
            lambda: Ruleset(4, restrict_tcp=True, scope=False, handle_fs=False),
            lambda: attempt(lambda: socket.create_connection(("127.0.0.1", port), timeout=5).close()),
        )
    assert tcp == "EACCES"
    name = f"\0hugind-landlock-abi6-{os.getpid()}"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(name)
        server.listen(1)

        def reach() -> str:
            with socket.socket(socket.AF_UNIX) as client:
                return attempt(lambda: client.connect(name))

        assert on_a_restricted_thread(lambda: Ruleset(6, restrict_tcp=False, scope=True, handle_fs=False), reach) == (
            "EPERM"
        )


def test_restricting_with_something_that_is_not_a_ruleset_fails_saying_so(abi):
    ruleset = Ruleset(abi, restrict_tcp=False, scope=False)
    os.close(ruleset.fd)
    read, write = os.pipe()
    ruleset.fd = read  # a descriptor, but no ruleset

    def run() -> LandlockError:
        try:
            ruleset.restrict_self()
        except LandlockError as exc:
            return exc
        raise AssertionError("restricted with a pipe")

    out: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: out.update(error=run()))
    thread.start()
    thread.join(30)
    os.close(write)
    error = out["error"]
    assert (error.errno, error.strerror) == (errno.EBADFD, "landlock_restrict_self failed")
    os.close(read)
