"""Attacks on the children's own layers (issue #26 items 3-4), each in both modes.

Every probe is a Python program a whitelisted ``python3`` runs inside the real
sandbox of a real run (the zygote's, as runs are; some also per command). It
reports what each syscall answered, so a probe that never reached its call
cannot pass, and the test asserts the errno of the layer that holds the rule:
seccomp (EPERM / ENOSYS / EAFNOSUPPORT), the mount view (ENOENT), Landlock's
signal scope (EPERM). Modes: bubblewrap, and the launcher forced with
``HUGIND_BWRAP=none`` (CI has bubblewrap).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import tempfile
import threading
import time
from pathlib import Path

import pytest

from tests.redteam.helpers import js, run_attack
from tests.redteam.test_confinement import _python_result, mode  # noqa: F401  # the fixture, both modes
from tests.support.processes import marker, wait_gone

pytestmark = pytest.mark.usefixtures("mode")

TRY_SYSCALL = (Path(__file__).resolve().parents[1] / "confine" / "try_syscall.py").read_text()
FILTERED = {
    "ptrace": "EPERM",
    "process_vm_readv": "EPERM",
    "pidfd_open": "EPERM",
    "pidfd_getfd": "EPERM",
    "prlimit64_other": "EPERM",
    "prlimit64_self": "EINVAL",  # its own limits stay its business (the call was made)
    "keyctl": "EPERM",
    "userfaultfd": "EPERM",
    "perf_event_open": "EPERM",
    "mount": "EPERM",
    "umount2": "EPERM",
    "fsopen": "EPERM",
    "open_tree": "EPERM",
    "pivot_root": "EPERM",
    "chroot": "EPERM",
    "unshare": "EPERM",
    "setns": "EPERM",
    "clone_newuser": "EPERM",
    "clone3": "ENOSYS",
    "openat2": "ENOSYS",
    "io_uring_setup": "EPERM",
    "socket_netlink": "EAFNOSUPPORT",
    "kcmp": "EPERM",
}


def _lines(result: dict) -> dict[str, str]:
    assert result["exit_code"] == 0, result
    return dict(line.split(None, 1) for line in result["stdout"].splitlines())


def test_forbidden_syscalls_get_the_filters_errno(attack):
    assert _lines(_python_result(attack, TRY_SYSCALL)) == FILTERED


def test_forbidden_syscalls_per_command_too(attack, monkeypatch):
    monkeypatch.setenv("HUGIND_ZYGOTE", "0")  # the sandbox-per-command path (MCP servers, network commands)
    assert _lines(_python_result(attack, TRY_SYSCALL)) == FILTERED


CONNECT_UNIX = """
import errno, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
    print('result connected')
except OSError as e:
    print('result', errno.errorcode[e.errno])
"""


def test_a_named_unix_socket_outside_the_view_cannot_be_reached(attack):
    # A session bus, a systemd user socket, a Docker socket: outside /tmp (which is private anyway).
    where = Path(tempfile.mkdtemp(prefix="hugind-redteam-sock-", dir=Path.home()))
    path = where / "bus.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(4)
    listener.settimeout(0.1)
    seen: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                seen.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.connect(str(path))  # reachable from here: the attack is meaningful
        probe.close()
        result = _python_result(attack, CONNECT_UNIX, str(path))
    finally:
        stop.set()
        thread.join()
        listener.close()
        path.unlink()
        where.rmdir()
    assert _lines(result) == {"result": "ENOENT"}  # the mount view has no such path
    assert len(seen) == 1  # only this test's own probe


SIGNAL_SCAN = """
import errno, os
mine = {os.getpid(), os.getppid()}
allowed, refused = [], []
for pid in range(1, 400):
    if pid in mine:
        continue
    try:
        os.kill(pid, 0)
        allowed.append(pid)
    except OSError as e:
        if e.errno == errno.EPERM:
            refused.append(pid)
print('allowed', allowed)
print('refused', len(refused))
"""


def test_a_command_can_signal_nothing_but_its_own_tree(attack):
    # Landlock's signal scope: the worker's domain holds the worker and the command only; init,
    # the zygote and the worker's keeper are outside it (refused: EPERM, so they exist and were tried).
    lines = _lines(_python_result(attack, SIGNAL_SCAN))
    assert lines["allowed"] == "[]"
    assert int(lines["refused"]) >= 3


def test_leftovers_of_a_command_are_gone_when_it_returns(attack):
    # `setsid sleep 61 & echo done` under a 2 s timeout: the command returns at once (its tree is
    # killed by the kernel-scoped sweep of its worker, or with its PID namespace), and the sleep is gone.
    for zygote in ("1", "0"):
        os.environ["HUGIND_ZYGOTE"] = zygote
        try:
            mark = marker()
            body = (
                f"const r = await run_command({js(f'setsid sleep {mark} & echo done')}, "
                "{detailed: true});\nreturn [r.stdout, r.timed_out];"
            )
            started = time.monotonic()
            out = attack(body, {"shell": {"allow": True, "timeout": 2}})
            assert out.value["value"] == ["done\n", False], (zygote, out.value)
            assert time.monotonic() - started < 15
            assert wait_gone(mark, within=1) == [], zygote
        finally:
            os.environ.pop("HUGIND_ZYGOTE", None)


SETUID = """
import ctypes, errno, os
def attempt(fn):
    try:
        fn()
        return 'OK'
    except OSError as e:
        return errno.errorcode[e.errno]
open('out/tool', 'w').write('#!/bin/sh\\n')
print('chmod', attempt(lambda: os.chmod('out/tool', 0o4755)))
print('chmod_gid', attempt(lambda: os.chmod('out/tool', 0o2755)))
print('create', attempt(lambda: os.close(os.open('out/made', os.O_CREAT | os.O_WRONLY, 0o4755))))
cap = bytes.fromhex('01000002' + '00200000' + '00000000' + '00000000' + '00000000')  # v2: cap_sys_admin
print('setcap', attempt(lambda: os.setxattr('out/tool', 'security.capability', cap)))
class H(ctypes.Structure): _fields_ = [('v', ctypes.c_uint32), ('pid', ctypes.c_int)]
data = (ctypes.c_uint32 * 6)()
ctypes.CDLL(None).capget(ctypes.byref(H(0x20080522, 0)), data)
print('caps', sum(data))
"""


def test_nothing_a_command_writes_carries_privileges_out(agent_dir):
    root = agent_dir()
    (root / "out").mkdir()
    body = f"return await spawn('python3', ['-c', {js(SETUID)}], {{detailed: true}});"
    out = run_attack(root, body, {"shell": {"allow": True, "whitelist": ["python3"]}, "filesystem": {"write": ["out"]}})
    lines = _lines(out.value["value"])
    assert lines == {"chmod": "EPERM", "chmod_gid": "EPERM", "create": "EPERM", "setcap": "EPERM", "caps": "0"}
    tool = os.stat(root / "out" / "tool")
    assert not tool.st_mode & (stat.S_ISUID | stat.S_ISGID)
    assert os.listxattr(root / "out" / "tool") == []
    assert not (root / "out" / "made").exists()


PRLIMIT_OTHERS = """
import errno, os, resource
hits = {}
for pid in range(1, 400):
    if pid == os.getpid():
        continue
    try:
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (4, 4))
        hits[pid] = 'OK'
    except OSError as e:
        hits.setdefault(errno.errorcode[e.errno], 0)
print(sorted(k for k, v in hits.items() if v == 'OK'), sorted(k for k in hits if isinstance(k, str)))
"""


def test_a_command_cannot_lower_the_limits_of_the_next(attack):
    body = (
        f"const a = await spawn('python3', ['-c', {js(PRLIMIT_OTHERS)}], {{detailed: true}});\n"
        "const b = await spawn('python3', ['-c', 'import resource; print(*resource.getrlimit(7))'], "
        "{detailed: true});\n"
        "return [a, b];"
    )
    out = attack(body, {"shell": {"allow": True, "whitelist": ["python3"]}})
    assert out.value["ok"], out.value
    first, second = out.value["value"]
    assert first["exit_code"] == 0, first
    assert first["stdout"].strip() == "[] ['EPERM']", first  # every other pid: the filter's EPERM
    assert second["stdout"] == "1024 1024\n", second  # RLIMIT_NOFILE as planned, not 4


def test_the_checks_output_is_the_runs_json(attack):
    # The probes above parse the run's JSON value; a sanity check that results arrive intact.
    result = _python_result(attack, "print('ok')")
    assert json.loads(json.dumps(result))["stdout"] == "ok\n"


SWAP = "import os, shutil, sys; shutil.rmtree(sys.argv[1]); os.symlink('/', sys.argv[1])"


def test_a_working_dir_swapped_for_a_symlink_does_not_widen_the_next_view(agent_dir):
    # The working dir lies in a writable root: one command replaces it with a link to /, the next
    # (in the zygote and per command) must still see only the run's view: the secret outside stays unread.
    outside = Path(tempfile.mkdtemp(prefix="hugind-redteam-cwd-", dir=Path.home()))  # not under the private /tmp
    (outside / "secret.txt").write_text("cwd-swap-secret")
    try:
        _swap_twice(agent_dir, outside)
    finally:
        shutil.rmtree(outside)


def _swap_twice(agent_dir, outside: Path) -> None:
    for zygote in ("1", "0"):
        os.environ["HUGIND_ZYGOTE"] = zygote
        try:
            root = agent_dir()
            (root / "out" / "work").mkdir(parents=True)
            work = str(root / "out" / "work")
            body = (
                f"const swap = await spawn('python3', ['-c', {js(SWAP)}, {js(work)}], {{detailed: true}});\n"
                f"const read = await spawn('cat', [{js(str(outside / 'secret.txt'))}], {{detailed: true}});\n"
                "return [swap.exit_code, read];"
            )
            perms = {
                "shell": {"allow": True, "whitelist": ["python3", "cat"], "working_dir": "out/work"},
                "filesystem": {"write": ["out"]},
            }
            out = run_attack(root, body, perms)
            assert out.value["ok"], out.value
            swap, read = out.value["value"]
            assert swap == 0 and os.path.islink(root / "out" / "work"), (zygote, out.value)
            assert read["exit_code"] != 0 and "cwd-swap-secret" not in read["stdout"], (zygote, read)
        finally:
            os.environ.pop("HUGIND_ZYGOTE", None)


LIMITS = "import resource as r; print(*(r.getrlimit(k)[0] for k in (r.RLIMIT_NOFILE, r.RLIMIT_FSIZE, r.RLIMIT_CPU)))"


def test_rlimits_are_set_by_hugind_in_a_sandbox_per_command(attack, monkeypatch):
    # No prlimit binary in the path: bubblewrap's sandbox runs hugind's limits.py, the launcher sets them itself.
    monkeypatch.setenv("HUGIND_ZYGOTE", "0")
    result = _python_result(attack, LIMITS, timeout=7)
    assert result["exit_code"] == 0, result
    assert result["stdout"].split() == ["1024", str(16 * 1024 * 1024), "8"]  # cpu: timeout + 1
