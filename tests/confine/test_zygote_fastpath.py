"""The worker's short cuts (hugind/confine/zygote.py), each against the long way.

* A command that leaves nothing behind is not followed by ``kill(-1)``: the
  worker asks the kernel whether it has any child left (``_tree_left``). Tested
  on a real subreaper with every kind of child a command can leave, and end to
  end: the same commands through the zygote and through the per-command path
  (``HUGIND_ZYGOTE=0``) give the same output and status, leftovers included.
* Packets are read into one buffer per process: a short command after a long
  one gets exactly its own argv and environment.
* The PATH lookup gives what ``os.path.join`` and ``isfile`` gave.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from hugind.confine import zygotes
from hugind.confine.landlock import SCOPE_ABI
from hugind.confine.probe import capabilities
from tests.redteam.helpers import js, run_attack

ZYGOTE_PY = Path(zygotes.__file__).resolve().parent / "zygote.py"


def _zygote_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hugind_zygote_under_test", ZYGOTE_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Run in a child of its own: it becomes a subreaper and makes children of every kind.
TREE_LEFT = r"""
import ctypes, importlib.util, os, signal, sys, time
spec = importlib.util.spec_from_file_location("z", sys.argv[1])
z = importlib.util.module_from_spec(spec); spec.loader.exec_module(z)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
# Signals scoped to this process's own tree (Landlock), and only ever sent to a pid it made:
# an unscoped kill(-1) here, as root, would reach every process of the machine.
z._load_siblings()
z._scoped_domain()
assert libc.prctl(z.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
seen = {"none": z._tree_left()}

pid = os.fork()
if pid == 0:
    time.sleep(30); os._exit(0)
seen["live"] = z._tree_left()
os.kill(pid, signal.SIGKILL)
os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # dead, not reaped: a zombie
seen["zombie"] = z._tree_left()
os.waitpid(pid, 0)
seen["reaped"] = z._tree_left()

# A grandchild whose parent exits comes to this subreaper.
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    grandchild = os.fork()
    if grandchild == 0:
        time.sleep(30); os._exit(0)
    os.write(w, str(grandchild).encode())
    os._exit(0)
os.close(w)
grandchild = int(os.read(r, 64))
os.waitpid(pid, 0)
seen["orphan"] = z._tree_left()
os.kill(grandchild, signal.SIGKILL)
os.waitpid(grandchild, 0)  # reparented here: this subreaper reaps it
seen["orphan_reaped"] = z._tree_left()

# clone() with exit signal 0: plain waitpid(-1) does not see it at all.
SYS_clone = {"x86_64": 56, "aarch64": 220}[os.uname().machine]
pid = libc.syscall(SYS_clone, 0, 0, 0, 0, 0)
if pid == 0:
    libc.pause(); libc.syscall(60 if os.uname().machine == "x86_64" else 93, 0)
try:
    os.waitpid(-1, os.WNOHANG)
    seen["waitpid_sees_clone"] = True
except ChildProcessError:
    seen["waitpid_sees_clone"] = False
seen["clone"] = z._tree_left()
os.kill(pid, signal.SIGKILL)
os.waitid(os.P_PID, pid, os.WEXITED | z.WAIT_ALL)
seen["after_clone"] = z._tree_left()
print(seen)
"""


def test_tree_left_sees_every_kind_of_child() -> None:
    if os.uname().machine not in ("x86_64", "aarch64"):
        pytest.skip("the raw clone() number is known here for x86_64 and aarch64 only")
    if capabilities().landlock_abi < SCOPE_ABI:
        pytest.skip("needs Landlock's signal scope (ABI 6) to keep the test's signals in its own tree")
    done = subprocess.run([sys.executable, "-c", TREE_LEFT, str(ZYGOTE_PY)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = eval(done.stdout)  # a dict literal this test's own child printed
    assert seen == {
        "none": False,
        "live": True,
        "zombie": True,
        "reaped": False,
        "orphan": True,
        "orphan_reaped": False,
        "waitpid_sees_clone": False,  # why _tree_left asks with __WALL
        "clone": True,
        "after_clone": False,
    }


def _program_path_before(argv: list[str], env: dict[str, str]) -> str:
    """The lookup as it was written before (os.path.join, isfile, access)."""
    name = argv[0]
    if "/" in name:
        return name
    for directory in env.get("PATH", "").split(":"):
        candidate = os.path.join(directory or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return name


def test_program_path_finds_what_join_and_isfile_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    z = _zygote_module()
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "tool").write_text("#!/bin/sh\n")
    (tmp_path / "bin" / "tool").chmod(0o755)
    (tmp_path / "bin" / "plain").write_text("not executable")
    (tmp_path / "bin" / "dir").mkdir()
    (tmp_path / "tool").write_text("#!/bin/sh\n")
    (tmp_path / "tool").chmod(0o755)
    monkeypatch.chdir(tmp_path)
    b = str(tmp_path / "bin")
    paths = [
        "",
        ":",
        f"{b}",
        f"{b}/",
        f"/nowhere:{b}",
        f":{b}",
        f"{b}:",
        "/usr/bin:/bin",
        "/",
        f"{b}\0x:{b}",
        ".",
        "bin",
    ]
    names = ["tool", "plain", "dir", "true", "sh", "", "nothing-here", "./tool", "bin/tool"]
    for path, name in itertools.product(paths, names):
        env = {"PATH": path}
        assert z._program_path([name], env) == _program_path_before([name], env), (path, name)
    assert z._program_path(["tool"], {}) == _program_path_before(["tool"], {})


COMMANDS = [
    "true",
    "false",
    "echo out; echo err >&2; exit 3",
    "sleep 30 & echo started",  # leaves a process: killed before the report, in both paths
    "sh -c 'sleep 30 & sleep 30 &' ; echo twice",
    # A leftover that would write a file a second later; the next command looks for it.
    "sh -c 'sleep 1; echo late > late.txt' > /dev/null 2>&1 & echo started",
    "sleep 2; cat late.txt",
    "no-such-program-here",
    "echo " + "x" * 6000,  # a long packet, then short ones read into the same buffer
    "env",
    "echo short",
]

BODY = f"""
const out = [];
for (const command of {js(COMMANDS)}) {{
  const t0 = Date.now();
  const r = await run_command(command, {{detailed: true}});
  out.push([r, Date.now() - t0]);
}}
return out;
"""


def test_the_zygote_and_the_per_command_path_agree(mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[tuple[str, ...]] = []
    start = zygotes.Zygote.start

    def recording(self, plan, out_w, err_w, watch=None):  # type: ignore[no-untyped-def]
        started.append(plan.argv)
        return start(self, plan, out_w, err_w, watch)

    monkeypatch.setattr(zygotes.Zygote, "start", recording)
    results = {}
    for zygote in ("1", "0"):
        monkeypatch.setenv(zygotes.ZYGOTE_ENV, zygote)
        out = run_attack(
            tmp_path / f"agent-{zygote}",
            BODY,
            {"filesystem": {"read": ["."], "write": ["."]}, "shell": {"allow": True}},
        )
        results[zygote] = out.value["value"]
        if zygote == "1":
            assert len(started) == len(COMMANDS)  # every command went through a worker
    assert len(started) == len(COMMANDS)  # and none with HUGIND_ZYGOTE=0
    for command, (via_zygote, zygote_ms), (alone, alone_ms) in zip(COMMANDS, results["1"], results["0"], strict=True):
        if command == "env":  # the agent's own directory differs between the two runs
            via_zygote["stdout"] = via_zygote["stdout"].replace("agent-1", "agent-X")
            alone["stdout"] = alone["stdout"].replace("agent-0", "agent-X")
            assert sorted(via_zygote["stdout"].splitlines()) == sorted(alone["stdout"].splitlines())
            via_zygote["stdout"] = alone["stdout"] = ""
        assert via_zygote == alone, command
        assert zygote_ms < 20_000 and alone_ms < 20_000, (command, zygote_ms, alone_ms)  # no one waited out a sleep
    got = {command: result for command, (result, _) in zip(COMMANDS, results["1"], strict=True)}
    mixed = got["echo out; echo err >&2; exit 3"]
    assert (mixed["stdout"], mixed["stderr"], mixed["exit_code"]) == ("out\n", "err\n", 3)
    assert got["sleep 30 & echo started"]["stdout"] == "started\n"
    late = got["sleep 2; cat late.txt"]
    assert late["stdout"] == "" and late["exit_code"] == 1 and "late.txt" in late["stderr"]  # killed before it wrote
    assert not (tmp_path / "agent-1" / "late.txt").exists()
    assert got["echo " + "x" * 6000]["stdout"] == "x" * 6000 + "\n"
    assert got["echo short"]["stdout"] == "short\n"
