"""Runs started from the snapshot against the same runs started from ``_start``.

Each case runs one agent through the real run pipeline twice, once from the
snapshot and once with ``HUGIND_PY_SNAPSHOT=0`` (the plain path), and asserts
the same outcome: stdout, stderr, result or error, exit code, audit log
(timestamps aside). ``py_start.starts`` proves which start each run took.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

import pytest

from hugind.errors import HugindError
from hugind.manifest import load_agent
from hugind.run import RunOptions, run_agent
from hugind.sandbox import py_start
from tests.conftest import run_cli
from tests.python.helpers import run_py, write_agent
from tests.support.chat_server import ChatServer, Reply, tool_call

WAYS = ("snapshot", "plain")


def _audit(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k not in ("ts", "duration_ms", "elapsed_ms")} for e in entries]


def _in_process(monkeypatch, way: str, root: Path, *args: str, **options: Any) -> tuple[Any, ...]:
    """One in-process run; what a caller can see of it (output, result or error, audit),
    after asserting the start it took."""
    if way == "plain":
        monkeypatch.setenv("HUGIND_PY_SNAPSHOT", "0")
    else:
        monkeypatch.delenv("HUGIND_PY_SNAPSHOT", raising=False)
    audit_path = root.parent / f"{root.name}.{way}.audit.jsonl"
    audit_path.unlink(missing_ok=True)
    out: list[bytes] = []
    err: list[bytes] = []
    opts = RunOptions(args=list(args), stdout=out.append, stderr=err.append, host_env={}, audit_path=audit_path)
    for key, value in options.items():
        setattr(opts, key, value)
    before = py_start.starts.copy()
    try:
        result = run_agent(load_agent(root), opts)
        seen: tuple[Any, ...] = ("ok", result.value, result.has_result, result.denials)
    except HugindError as exc:
        seen = ("error", type(exc).__name__, exc.exit_code, str(exc))
    took = py_start.starts - before
    assert sum(took.values()) == 1 and took[way] == 1, took
    audit = [json.loads(line) for line in audit_path.read_text().splitlines() if line.strip()]
    return (*seen, b"".join(out).decode(), b"".join(err).decode(), _audit(audit))


def _both(monkeypatch, root: Path, *args: str, **options: Any) -> tuple[Any, ...]:
    outcomes = {way: _in_process(monkeypatch, way, root, *args, **options) for way in WAYS}
    assert outcomes["snapshot"] == outcomes["plain"]
    return outcomes["snapshot"]


CASES = {
    "hello": ("print('hello')\nimport sys\nprint(sys.argv, sys.orig_argv, sys.path[:2])\n", None),
    "input-result": ("def main(input):\n    print(input['args'])\n    return {'n': len(input['args'])}\n", None),
    "exception": ("def helper():\n    raise ValueError('bad value')\n\ndef main():\n    helper()\n", None),
    "sys-exit-3": ("import sys\nprint('before')\nsys.exit(3)\n", None),
    "sys-exit-0": ("import sys\nsys.exit(0)\n", None),
    "sys-exit-text": ("import sys\nsys.exit('a message')\n", None),
    "fs": (
        "import hugind\nprint(hugind.fs.read_text('data/notes.txt'))\n"
        "try:\n    hugind.fs.write_text('data/notes.txt', 'x')\nexcept hugind.HostError as e:\n    print('denied', e)\n"
        "print(open('/data/notes.txt').read())\n"
        "try:\n    open('/data/new.txt', 'w')\nexcept OSError as e:\n    print('os denied', e.errno)\n",
        {"filesystem": {"read": ["data"]}},
    ),
    "run-command": ("import hugind\nprint(hugind.run_command('echo hi'))\n", {"shell": {"allow": True}}),
    "parallel-commands": (
        "import asyncio, hugind\n\nasync def main():\n"
        "    outs = await asyncio.gather(*(hugind.run_command_async(f'echo {i}') for i in range(3)))\n"
        "    return outs\n",
        {"shell": {"allow": True}},
    ),
    "denied-command": (
        "import hugind\ntry:\n    hugind.run_command('echo hi')\n"
        "except hugind.HostError as e:\n    print(type(e).__name__, e)\n",
        None,
    ),
    "finalized-at-exit": (
        "import atexit\nclass A:\n    def __del__(self):\n        print('finalized')\n"
        "a = A()\natexit.register(lambda: print('atexit'))\nprint('hi')\n",
        None,
    ),
    "deadline": ("while True:\n    pass\n", {"limits": {"timeout": 1}}),
    "output-cap": ("while True:\n    print('x' * 1000)\n", {"limits": {"max_output_bytes": 50_000}}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_same_run_from_the_snapshot_and_from_start(tmp_path, monkeypatch, case):
    source, permissions = CASES[case]
    root = write_agent(tmp_path / "a", source, permissions)
    (root / "data").mkdir()
    (root / "data" / "notes.txt").write_text("public notes")
    seen = _both(monkeypatch, root, "one", "two")
    if case == "hello":
        assert seen[4].startswith("hello\n['/main.py', 'one', 'two'] ['python', '-I', '-S', '-B', '/.hugind/boot.py']")
    if case in ("deadline", "output-cap"):
        assert seen[0] == "error" and seen[1] == "LimitExceeded"
    if case == "finalized-at-exit":
        assert seen[4] == "hi\natexit\nfinalized\n"
    if case == "exception":
        assert seen[0] == "error" and "bad value" in seen[3]


def test_a_memory_bomb_fails_the_same_way(tmp_path, monkeypatch):
    """The same error and exit code, MemoryError said. Not the same words: the plain path
    meets the cap while its runner imports ``traceback`` to report the error, and exits 1
    with the interpreter's own report; the snapshot has it preloaded and reports it as the
    agent's error."""
    bomb = "x = []\nwhile True:\n    x.append(bytearray(1 << 20))\n"
    root = write_agent(tmp_path / "a", bomb, {"limits": {"memory_mb": 96}})
    seen = {way: _in_process(monkeypatch, way, root) for way in WAYS}
    for way, (kind, name, code, message, _out, err, audit) in seen.items():
        assert (kind, name, code) == ("error", "AgentFailed", seen["plain"][2]), way
        assert "MemoryError" in message + err, way
        assert audit == seen["plain"][6]


def test_module_state_differs_only_where_documented(tmp_path, monkeypatch):
    """The snapshot's sys.modules also holds the preloaded library (asyncio through its loop)."""
    root = write_agent(tmp_path / "a", "import sys\nprint('asyncio' in sys.modules, 'hugind._loop' in sys.modules)\n")
    assert _in_process(monkeypatch, "snapshot", root)[4] == "True True\n"
    assert _in_process(monkeypatch, "plain", root)[4] == "False False\n"


def test_an_agentic_tool_call(tmp_path, monkeypatch):
    source = (
        'import hugind\n\n@hugind.tool()\ndef shout(args):\n    """Shout."""\n'
        "    print('shouting', args)\n    return args['text'].upper()\n"
    )
    root = write_agent(tmp_path / "a", source, mode="agentic")
    outcomes = {}
    for way in WAYS:
        steps = [Reply("", tool_calls=[tool_call("shout", {"text": "hey"})]), Reply("said it")]
        with ChatServer(steps) as server:
            seen = _in_process(monkeypatch, way, root, "go", backend=server.url)
            tool_messages = [m for m in server.chat_requests[1].body["messages"] if m.get("role") == "tool"]
        outcomes[way] = (seen, [m["content"] for m in tool_messages])
    assert outcomes["snapshot"] == outcomes["plain"]
    assert outcomes["snapshot"][1] == ["HEY"]


def test_the_cli_exits_the_same(tmp_path):
    """Through the real ``hugind run`` (a warm server's child): stdout, stderr, exit code."""
    cases = {
        "ok": "print('fine')\n",
        "raise": "raise KeyError('k')\n",
        "exit": "import sys\nsys.exit(4)\n",
    }
    for name, source in cases.items():
        root = write_agent(tmp_path / name, source)
        snap = run_cli("run", str(root))
        plain = run_cli("run", str(root), env={"HUGIND_PY_SNAPSHOT": "0"})
        assert (snap.code, snap.stdout, snap.stderr) == (plain.code, plain.stdout, plain.stderr), name


def test_a_record_replays_whichever_start_is_on(tmp_path):
    """A recorded or replayed run always takes the plain path (the hash secret is then on the
    tape): a record made with the snapshot on replays with it off, and the other way round."""
    src = (
        "import random, time, hugind\n"
        "print(hugind.run_command('echo one'), random.random(), time.time(), hash('abc'))\n"
        "print(list({'a', 'b', 'c', 'd', 'e'}))\n"
    )
    root = write_agent(tmp_path / "a", src, {"shell": {"allow": True}})
    for record_env, replay_env in (({}, {"HUGIND_PY_SNAPSHOT": "0"}), ({"HUGIND_PY_SNAPSHOT": "0"}, {})):
        record = tmp_path / f"run{len(record_env)}.rec"
        first = run_cli("run", str(root), "--record", str(record), env=record_env)
        assert first.code == 0, first.stderr
        again = run_cli("replay", str(record), env=replay_env)
        assert again.code == 0, again.stderr
        assert again.stdout == first.stdout


def test_a_tapped_run_takes_the_plain_path(tmp_path, monkeypatch):
    from hugind.sandbox.engine import EngineConfig
    from hugind.sandbox.instance import GuestIO

    class Config:
        tap = object()

    io = GuestIO(stdout=lambda b: None, stderr=lambda b: None)
    assert py_start.plan(Config(), EngineConfig(), io) is None


def test_a_refused_snapshot_falls_back_to_start(tmp_path, monkeypatch):
    """An environment the snapshot cannot represent (another locale) runs from ``_start``, silently."""
    source = "import os, sys\nprint(os.environ.get('LANG'), sys.stdout.errors)\n"
    root = write_agent(tmp_path / "a", source, env=["LANG"])
    monkeypatch.delenv("HUGIND_PY_SNAPSHOT", raising=False)
    before = py_start.starts.copy()
    ran = run_py(root, env={"LANG": "en_US.UTF-8"})
    assert py_start.starts - before == {"plain": 1}
    assert ran.stdout == "en_US.UTF-8 strict\n" and ran.stderr == ""
    ran = run_py(root, env={"LANG": "C.UTF-8"})
    assert py_start.starts - before == {"plain": 1, "snapshot": 1}
    assert ran.stdout == "C.UTF-8 surrogateescape\n"


def test_a_memory_cap_below_the_snapshots_start_falls_back(tmp_path, monkeypatch):
    from hugind.sandbox.engine import EngineConfig
    from hugind.sandbox.instance import _initial_memory_bytes

    snap = py_start.snapshot_for(EngineConfig())
    assert snap is not None
    below = _initial_memory_bytes(snap.module) // 2**20 - 1
    root = write_agent(tmp_path / "a", "print('small')\n", {"limits": {"memory_mb": below}})
    monkeypatch.delenv("HUGIND_PY_SNAPSHOT", raising=False)
    before = py_start.starts.copy()
    with contextlib.suppress(HugindError):  # the plain path may not fit in so little: the path taken matters
        run_py(root)
    assert py_start.starts - before == {"plain": 1}


def test_the_snapshot_is_made_once_per_engine_configuration():
    from hugind.sandbox.engine import EngineConfig

    first = py_start.snapshot_for(EngineConfig())
    assert first is not None and py_start.snapshot_for(EngineConfig()) is first
    assert first.fixed == ("/.hugind",) and first.head == py_start.HEAD
    assert json.loads(json.dumps(list(py_start.ARGV)))[:4] == ["python", "-I", "-S", "-B"]


def test_making_the_snapshot_does_not_use_up_the_runs_deadline(tmp_path, monkeypatch):
    """The first run makes the snapshot (here: found in the cache after a 1.5 s wait, as
    when another process is making it); an agent with a 1 s timeout still runs."""
    from hugind.sandbox.engine import EngineConfig

    real_load = py_start._load

    def slow_load(config):
        time.sleep(1.5)
        return real_load(config)

    config = EngineConfig()
    monkeypatch.delitem(py_start._snapshots, config, raising=False)
    monkeypatch.setattr(py_start, "_load", slow_load)
    monkeypatch.delenv("HUGIND_PY_SNAPSHOT", raising=False)
    root = write_agent(tmp_path / "a", "print('in time')\n", {"limits": {"timeout": 1}})
    before = py_start.starts.copy()
    assert run_py(root).stdout == "in time\n"
    assert py_start.starts - before == {"snapshot": 1}


@pytest.mark.parametrize(
    "source",
    [
        "import hugind\nhugind.run_command('sleep 60')\n",
        "import asyncio\nasync def main():\n    await asyncio.sleep(60)\n",
    ],
    ids=["blocking-op", "asyncio.sleep"],
)
def test_a_cancelled_run_stops_the_same_way(tmp_path, monkeypatch, source):
    """hugind serve's cancellation reaches a run from the snapshot, waiting on the host, as
    one from ``_start`` (the agent's own 8 s timeout bounds a failure)."""
    from hugind.mcp.serve import Cancellation

    root = write_agent(tmp_path / "a", source, {"shell": {"allow": True, "timeout": 60}, "limits": {"timeout": 8}})
    outcomes = {}
    for way in WAYS:
        asked = time.monotonic() + 1.0
        started = time.monotonic()
        outcomes[way] = _in_process(
            monkeypatch, way, root, observers=[Cancellation(lambda asked=asked: time.monotonic() > asked)]
        )
        assert time.monotonic() - started < 6, way
    assert outcomes["snapshot"] == outcomes["plain"]
    assert outcomes["snapshot"][:3] == ("error", "RunCancelled", 130)
