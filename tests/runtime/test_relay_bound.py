"""A kept store holds a bounded number of WASI relay instances (hugind/sandbox/wasi_relay.py).

Each run that waits in WASI (here: a JS agent reading an inherited stdin, which
goes through the interposed ``fd_read`` and its relay) used to add a relay
instance to its store; a kept store (recycle.py) serves run after run, so the
instances piled up for the life of the process. The runs below are real runs
in a fresh process, with stdin on ``/dev/null``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import wasmtime

from hugind.sandbox import raw_ffi, wasi_relay
from tests.conftest import REPO

READER = "export default () => { const b = new Uint8Array(16); return Javy.IO.readSync(0, b); };"

LOOP = """
import json, os, sys
from pathlib import Path
from hugind.manifest import load_agent
from hugind.run import RunOptions, run_agent
from hugind.sandbox import recycle, wasi_relay
agent = load_agent(Path(sys.argv[1]))
runs, bound = int(sys.argv[2]), sys.argv[3]
if bound != "-":
    wasi_relay.MAX_PER_STORE = int(bound)
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
marks, sink = [], []
for i in range(runs):
    result = run_agent(agent, RunOptions(stdout=sink.append, stderr=sink.append, host_env={}, inherit_stdin=True))
    assert result.value == 0, result.value  # EOF: the read went through the relay
    if i + 1 in (200, runs):
        marks.append({"runs": i + 1, "relays": wasi_relay.stats.made, "rss": rss(), "kept": recycle.kept_count()})
print(json.dumps({"marks": marks, "taken": recycle.stats.taken}))
"""


def _loop(tmp_path: Path, runs: int, bound: str = "-") -> dict:
    agent = tmp_path / "reader.js"
    agent.write_text(READER)
    done = subprocess.run(
        [sys.executable, "-c", LOOP, str(agent), str(runs), bound],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_2000_kept_runs_that_wait_in_wasi_hold_steady(tmp_path):
    report = _loop(tmp_path, 2000)
    early, late = report["marks"]
    mib = 1024 * 1024
    print(
        f"relay instances after {early['runs']} runs: {early['relays']}, after {late['runs']}: {late['relays']}; "
        f"RSS {early['rss'] / mib:.1f} MiB -> {late['rss'] / mib:.1f} MiB"
    )
    assert report["taken"] >= 1990  # the runs really were on kept instances
    # One relay per store: the first run's (never kept), then the kept store's own.
    assert late["relays"] == early["relays"] <= 4
    # Before the bound, ~5.6 KiB a run: 1,800 runs grew the process by ~10 MiB.
    assert late["rss"] - early["rss"] < 3 * mib


def test_a_store_that_made_more_relays_than_the_bound_is_not_kept(tmp_path):
    report = _loop(tmp_path, 210, bound="0")  # every store made one: none may be kept
    _early, late = report["marks"]
    assert late["kept"] == 0
    assert report["taken"] == 0
    assert late["relays"] == 210  # a fresh store, so a fresh relay, every run


_WAT = """(module (import "t" "use" (func $use (result i32))) (memory (export "memory") 1)
  (func (export "run") (result i32) (call $use)))"""
_SPEC = wasi_relay.RelaySpec((("sched_yield", ()),), 1, 4)


def test_a_relay_handed_to_the_next_run_is_zeroed_and_a_grown_one_is_replaced():
    if not raw_ffi.enabled():
        pytest.skip("wasmtime-py's public path: stores are not kept, relays not reused")
    engine = wasmtime.Engine()
    linker = wasmtime.Linker(engine)
    seen: list[tuple[int, bytes]] = []
    grow = [False]

    def use(caller: wasmtime.Caller) -> int:
        relay = wasi_relay.instantiate(engine, caller, _SPEC)
        seen.append((id(relay), bytes(relay.memory.read(caller, 0, 8))))
        relay.memory.write(caller, b"LEFTOVER", 0)
        if grow[0]:
            relay.memory.grow(caller, 1)
        return 0

    linker.define_func("t", "use", wasmtime.FuncType([], [wasmtime.ValType.i32()]), use, access_caller=True)
    store = wasmtime.Store(engine)
    run = linker.instantiate(store, wasmtime.Module(engine, _WAT)).exports(store)["run"]
    made = wasi_relay.stats.made
    run(store)
    run(store)  # the same relay, its memory zeroed
    grow[0] = True
    run(store)  # still the same one; this run grows it
    grow[0] = False
    run(store)  # a grown relay is not handed on: a new one
    assert wasi_relay.stats.made - made == 2
    assert [data for _, data in seen] == [bytes(8)] * 4
    assert seen[0][0] == seen[1][0] == seen[2][0] != seen[3][0]
