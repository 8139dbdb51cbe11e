"""Each enforcer of the launcher on its own (issue #32): a rule is proven held by the layer
that names it, with the errno only that layer gives, not by another layer in front of it.

``launcher_argv(..., only=...)`` keeps exactly the listed layers (a function argument,
out of reach of any option or policy). Landlock refuses with EACCES, where the mount
view gives EROFS or ENOENT and the empty network namespace ENETUNREACH/ECONNREFUSED;
seccomp refuses with EPERM a call that a privileged process would otherwise get to
(and fail with EFAULT on its bad arguments). Each probe prints what the syscall
answered, so a probe that never reached its call cannot pass.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from hugind.confine.command import launcher_argv
from hugind.confine.plan import plan_child
from hugind.confine.probe import capabilities
from hugind.policy import PolicyEngine, build_policy

HERE = Path(__file__).resolve().parent
TRY_SYSCALL = HERE / "try_syscall.py"

WRITE = """
import errno, sys
try:
    with open(sys.argv[1], 'a') as f:
        f.write('pwned')
    print('written')
except OSError as e:
    print(errno.errorcode[e.errno])
"""

CONNECT = """
import errno, socket, sys
s = socket.socket()
s.settimeout(3)
try:
    s.connect(('127.0.0.1', int(sys.argv[1])))
    print('connected')
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
"""


@pytest.fixture
def caps():
    found = capabilities()
    if not found.landlock_abi or not found.namespaces:
        pytest.skip(f"no Landlock or user namespaces here: {found.namespaces_problem}")
    return found


@pytest.fixture
def engine(tmp_path: Path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "file").write_text("original")
    (tmp_path / "out").mkdir()
    perms = {"shell": {"allow": True}, "filesystem": {"read": ["data", str(HERE)], "write": ["out"]}}
    policy = build_policy(perms, runtime_fs_mode=None, agent_root=tmp_path)
    engine = PolicyEngine(policy)
    yield engine
    engine.close()


def _run(engine, caps, tmp_path: Path, only: frozenset[str] | None, *argv: str) -> str:
    plan = plan_child(engine, ("/usr/bin/python3", "-I", "-S", *argv), str(tmp_path), {"PATH": "/usr/bin:/bin"})
    proc = subprocess.run(
        launcher_argv(plan, caps, None, None, only=only),
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
        env=plan.env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_only_layers_of_the_launcher_can_be_chosen(engine, caps, tmp_path):
    plan = plan_child(engine, ("/bin/true",), str(tmp_path), {})
    with pytest.raises(ValueError):
        launcher_argv(plan, caps, None, None, only=frozenset({"mounts"}))
    spec = launcher_argv(plan, caps, None, None, only=frozenset({"landlock"}))
    assert spec[spec.index("namespaces") + 1] == "0" and "seccomp" not in spec


def test_landlock_alone_refuses_writing_a_read_root(engine, caps, tmp_path):
    target = str(tmp_path / "data" / "file")
    assert _run(engine, caps, tmp_path, frozenset({"landlock"}), "-c", WRITE, target) == "EACCES"
    # The mount view alone refuses it too, by another errno: the two layers are told apart.
    assert _run(engine, caps, tmp_path, frozenset({"namespaces"}), "-c", WRITE, target) == "EROFS"
    assert _run(engine, caps, tmp_path, None, "-c", WRITE, str(tmp_path / "out" / "new")) == "written"
    assert (tmp_path / "data" / "file").read_text() == "original"


def test_landlock_alone_refuses_tcp(engine, caps, tmp_path):
    if caps.landlock_abi < 4:
        pytest.skip(f"Landlock ABI {caps.landlock_abi} has no TCP rules")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.2)
    accepted: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[1])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    port = str(listener.getsockname()[1])
    try:
        assert _run(engine, caps, tmp_path, frozenset({"landlock"}), "-c", CONNECT, port) == "EACCES"
        # Without any layer the same probe does connect: the listener is reachable.
        assert _run(engine, caps, tmp_path, frozenset(), "-c", CONNECT, port) == "connected"
    finally:
        stop.set()
        thread.join()
        listener.close()
    assert len(accepted) == 1  # only the unconfined probe's


def test_seccomp_alone_refuses_calls_a_privileged_process_would_reach(engine, caps, tmp_path):
    if not caps.seccomp:
        pytest.skip(caps.seccomp_problem)
    if os.geteuid() != 0:
        pytest.skip("needs root: without capabilities the kernel itself refuses these with EPERM")
    names = ["mount", "umount2", "pivot_root", "chroot", "fsopen", "unshare", "setns", "clone3", "socket_netlink"]
    bare = _run(engine, caps, tmp_path, frozenset(), str(TRY_SYSCALL), *names)
    filtered = _run(engine, caps, tmp_path, frozenset({"seccomp"}), str(TRY_SYSCALL), *names)
    assert dict(line.split() for line in bare.splitlines()) == {
        "mount": "EFAULT",
        "umount2": "EFAULT",
        "pivot_root": "EFAULT",
        "chroot": "EFAULT",
        "fsopen": "EFAULT",
        "unshare": "EINVAL",
        "setns": "EBADF",
        "clone3": "EINVAL",
        "socket_netlink": "OK",
    }
    assert dict(line.split() for line in filtered.splitlines()) == {
        **{name: "EPERM" for name in names},
        "clone3": "ENOSYS",
        "socket_netlink": "EAFNOSUPPORT",
    }


def test_capabilities_alone_are_dropped_before_exec(engine, caps, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root: an ordinary user has no capabilities to drop")
    code = "print(open('/proc/self/status').read().split('CapEff:')[1].split()[0])"
    assert int(_run(engine, caps, tmp_path, frozenset(), "-c", code), 16) != 0
    assert _run(engine, caps, tmp_path, frozenset({"capabilities"}), "-c", code) == "0000000000000000"
