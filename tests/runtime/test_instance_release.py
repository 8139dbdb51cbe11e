"""A finished run leaves nothing of its guest behind: store, instance and
linear memory go when the run does (wasmtime holds the WASI output callbacks
until the store is dropped, so they must not keep the guest alive)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import time
import weakref
from pathlib import Path

import pytest

from hugind.errors import LimitExceeded
from hugind.sandbox import wasi_output
from hugind.sandbox.instance import GuestInstance
from tests.runtime.helpers import run_captured


def _guests_alive() -> int:
    gc.collect()
    return sum(1 for obj in gc.get_objects() if isinstance(obj, GuestInstance))


def _stores_alive(at_most: int = -1) -> int:
    """Live stores; with ``at_most``, once the dropping thread has brought them down to it
    (it drops released stores shortly after their run), or after 10 s."""
    deadline = time.monotonic() + 10
    while True:
        gc.collect()
        stores, _ = wasi_output.outstanding()
        if stores <= at_most or at_most < 0 or time.monotonic() > deadline:
            return stores
        time.sleep(0.01)


def test_runs_release_their_guests(make_agent):
    agent = make_agent({"main.js": "export default () => { console.log('out'); console.error('err'); return 1; };"})
    run_captured(agent)  # warm: modules compiled, caches filled
    before, stores_before = _guests_alive(), _stores_alive()
    for _ in range(5):
        captured = run_captured(agent)
        assert (captured.result.value, captured.stdout, captured.stderr) == (1, "out\n", "err\n")
    assert _guests_alive() == before
    assert _stores_alive(stores_before) <= stores_before  # and their stores, memory and all, are gone


def test_a_run_that_hit_the_output_cap_releases_its_guest_too(make_agent):
    agent = make_agent(
        {"main.js": "export default () => { for (;;) console.log('x'.repeat(1000)); };"},
        permissions={"limits": {"max_output_bytes": 4096}},
    )
    before = _guests_alive()
    for _ in range(3):
        with pytest.raises(LimitExceeded, match="output cap of 4096 bytes"):
            run_captured(agent)
    assert _guests_alive() == before


def _guest(memory_mib: int = 0) -> GuestInstance:
    """A fresh JS engine instance, its memory grown to at least ``memory_mib`` MiB."""
    from hugind.host.dispatch import Dispatcher
    from hugind.host.registry import HostContext
    from hugind.sandbox.engine import EngineConfig
    from hugind.sandbox.instance import GuestIO, GuestLimits
    from hugind.sandbox.js_engine import engine_module

    ctx = HostContext(policy=None, agent_root=Path("."), deadline=time.monotonic() + 60)
    io = GuestIO(stdout=lambda b: None, stderr=lambda b: None)
    guest = GuestInstance(engine_module(EngineConfig()), Dispatcher(ctx, []), io, GuestLimits(), EngineConfig())
    missing = memory_mib * 2**20 - guest.memory.data_len(guest.store)
    if missing > 0:
        guest.memory.grow(guest.store, -(-missing // 65536))
    return guest


def test_a_small_store_is_dropped_by_release_itself(monkeypatch):
    # A thread hand-over costs a trivial run more than the drop (wasi_output.py).
    monkeypatch.setenv("HUGIND_RECYCLE", "0")  # a store that is not kept (recycle.py)
    guest = _guest()
    store = weakref.ref(guest.store)
    guest.release()
    assert store() is None


def test_a_large_store_is_dropped_off_the_callers_path(monkeypatch):
    handed: list[object] = []
    drop_later = wasi_output.drop_later
    monkeypatch.setattr(wasi_output, "drop_later", lambda store: (handed.append(1), drop_later(store)))
    monkeypatch.setenv("HUGIND_RECYCLE", "0")
    guest = _guest(wasi_output.DROP_HERE_BYTES // 2**20 + 1)
    before = wasi_output.outstanding()[0]
    guest.release()
    assert handed == [1]
    assert _stores_alive(before - 1) == before - 1  # the dropping thread got to it


EXIT_SCRIPT = """
import sys
from pathlib import Path
from hugind.manifest import load_agent
from hugind.run import RunOptions, run_agent
agent = load_agent(Path(sys.argv[1]))
for _ in range(3):
    try:
        run_agent(agent, RunOptions(stdout=lambda b: None, stderr=lambda b: None, host_env={}))
    except Exception as exc:
        last = exc  # kept: its frames hold the last run's store until the interpreter exits
print("ran")
"""


def test_a_process_that_ends_right_after_its_runs_exits_cleanly(make_agent):
    # wasmtime drops a store's output writers on its worker threads shortly after
    # the store; the process must wait for them rather than abort at exit.
    agent = make_agent(
        {"main.js": "export default () => { for (;;) console.log('x'.repeat(1000)); };"},
        permissions={"limits": {"max_output_bytes": 4096}},
    )
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": root}
    for _ in range(3):
        proc = subprocess.run(
            [sys.executable, "-c", EXIT_SCRIPT, str(agent)], capture_output=True, text=True, env=env, timeout=120
        )
        assert (proc.returncode, proc.stdout) == (0, "ran\n"), proc.stderr[-2000:]
        assert "panicked" not in proc.stderr
