"""Kept instances (hugind/sandbox/recycle.py): a run that starts on an instance
an earlier run used must find exactly what a fresh instance holds, and only a
run that ended cleanly leaves its instance behind."""

from __future__ import annotations

import ctypes
import mmap
import os
import secrets
import subprocess
import sys
import threading

import pytest
import wasmtime

from hugind.errors import LimitExceeded
from hugind.sandbox import private_pages, recycle
from hugind.sandbox.engine import EngineConfig, get_engine
from hugind.sandbox.instance import _linked_for
from hugind.sandbox.js_engine import engine_module
from hugind.sandbox.raw_wasm import load_agent_module
from tests.runtime.helpers import run_captured

# Leaves a secret in as many places as it can: a global, a module-level binding,
# a large string on the heap, a closure, the module registry; and reports what
# it found of an earlier run.
LEAVER = """
globalThis.__count = (globalThis.__count ?? 0) + 1;
let kept = null;
export default (input) => {
  const found = [globalThis.__left ?? null, globalThis.__count];
  const secret = input.args[0];
  globalThis.__left = secret;
  kept = () => secret + "!".repeat(1000);
  globalThis.__big = secret.repeat(2000);
  console.log("out:" + secret);
  return found;
};
"""


@pytest.fixture(autouse=True)
def _empty_shelves(monkeypatch):
    monkeypatch.delenv("HUGIND_RECYCLE", raising=False)
    recycle.clear()
    yield
    recycle.clear()


def _pre() -> wasmtime.InstancePre:
    config = EngineConfig()
    return _linked_for(get_engine(config), False).pre(engine_module(config))


def _fresh_state() -> tuple[bytes, list[object], list[int]]:
    """Memory, reset-handle globals and table sizes of an instance made by plain wasmtime."""
    config = EngineConfig()
    module = engine_module(config)
    engine = get_engine(config)
    linker = wasmtime.Linker(engine)
    linker.define_wasi()
    linker.define_unknown_imports_as_traps(module)
    store = wasmtime.Store(engine)
    store.set_wasi(wasmtime.WasiConfig())
    instance = linker.instantiate(store, module)
    return _state(store, instance)


def _state(store: wasmtime.Store, instance: wasmtime.Instance) -> tuple[bytes, list[object], list[int]]:
    exports = instance.exports(store)
    memory = exports["memory"]
    data = bytes(memory.read(store, 0, memory.data_len(store)))
    values = [exports[name].value(store) for name in exports if name.startswith("__hugind_snapshot_global_")]
    sizes = [exports[name].size(store) for name in exports if name.startswith("__hugind_snapshot_table_")]
    return data, values, sizes


def test_the_shipped_engine_may_be_kept():
    assert recycle.allowed(engine_module(EngineConfig()))


def test_a_kept_instance_holds_exactly_what_a_fresh_one_does(make_agent):
    agent = make_agent({"main.js": LEAVER})
    secret = "S3cr" + secrets.token_hex(16)
    for _ in range(3):
        run_captured(agent, secret)
    kept = recycle.take(_pre())
    assert kept is not None
    memory, values, sizes = _state(kept.store, kept.instance)
    assert secret.encode() not in memory
    fresh_memory, fresh_values, fresh_sizes = _fresh_state()
    assert len(memory) == len(fresh_memory)
    differing = [i for i in range(0, len(memory), 4096) if memory[i : i + 4096] != fresh_memory[i : i + 4096]]
    assert differing == []
    assert (values, sizes) == (fresh_values, fresh_sizes)


def test_reset_undoes_writes_anywhere_and_sets_the_globals_back(make_agent):
    # What a clean run cannot show: memory written past the image and a global
    # left changed (a run's stack pointer is back at its start when it returns).
    agent = make_agent({"main.js": "export default () => 1;"})
    for _ in range(3):
        run_captured(agent)
    pre = _pre()
    kept = recycle.take(pre)
    assert kept is not None
    exports = kept.instance.exports(kept.store)
    size = kept.memory.data_len(kept.store)
    for offset in (0, 4096 * 7 + 5, size // 2, size - 3):
        kept.memory.write(kept.store, b"\xffLEFT", min(offset, size - 5))
    exports["__hugind_snapshot_global_0"].set_value(kept.store, 12345)
    assert recycle.reset(kept, recycle._shelves[pre].pristine)
    assert _state(kept.store, kept.instance) == _fresh_state()


def test_a_run_on_a_kept_instance_sees_nothing_of_the_runs_before(make_agent):
    agent = make_agent({"main.js": LEAVER})
    taken = recycle.stats.taken
    for i in range(6):
        captured = run_captured(agent, f"run{i}")
        assert captured.result.value == [None, 1]  # no global left over, the module evaluated once
        assert captured.stdout == f"out:run{i}\n"  # its own output only, to its own sink
    assert recycle.stats.taken - taken >= 4  # runs 3-6 at least started on a kept instance


def test_the_first_run_of_a_module_is_not_kept(tmp_path):
    # A one-shot `hugind run` must not pay for reading the image it will not reuse.
    code = (
        "import sys; from pathlib import Path\n"
        "from hugind.manifest import load_agent\n"
        "from hugind.run import RunOptions, run_agent\n"
        "from hugind.sandbox import recycle\n"
        "agent = load_agent(Path(sys.argv[1]))\n"
        "counts = []\n"
        "for _ in range(3):\n"
        "    run_agent(agent, RunOptions(stdout=lambda b: None, stderr=lambda b: None, host_env={}))\n"
        "    counts.append(recycle.kept_count())\n"
        "print(counts)\n"
    )
    (tmp_path / "main.js").write_text("export default () => 1;")
    env = {k: v for k, v in os.environ.items() if k != "HUGIND_RECYCLE"}
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "main.js")], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[0, 1, 1]"


@pytest.mark.parametrize(
    ("source", "options", "error"),
    [
        ("export default () => { for (;;) {} };", {"timeout": 0.3}, "deadline"),
        ("export default () => { for (;;) console.log('x'.repeat(100)); };", {}, "output cap"),
    ],
    ids=["deadline", "output-cap"],
)
def test_a_run_that_was_stopped_is_not_kept(make_agent, source, options, error):
    limits = {"max_output_bytes": 4096}
    agent = make_agent({"main.js": source}, permissions={"limits": limits})
    clean = make_agent({"main.js": "export default () => 1;"})
    run_captured(clean)
    run_captured(clean)
    assert recycle.kept_count() == 1  # a clean run is kept
    recycle.clear()
    with pytest.raises(LimitExceeded, match=error):
        run_captured(agent, **options)
    assert recycle.kept_count() == 0


def test_a_run_that_grew_the_memory_is_not_kept(make_agent):
    agent = make_agent({"main.js": "export default () => new Uint8Array(32 << 20).length;"})
    for _ in range(3):
        assert run_captured(agent).result.value == 32 << 20
    assert recycle.kept_count() == 0


def test_an_agent_that_throws_is_kept_and_the_next_run_is_clean(make_agent):
    thrower = make_agent({"main.js": "globalThis.__left = 'x'; export default () => { throw new Error('no'); };"})
    checker = make_agent({"main.js": "export default () => globalThis.__left ?? null;"})
    for _ in range(2):
        with pytest.raises(Exception, match="no"):
            run_captured(thrower)
    assert recycle.kept_count() == 1  # a JS exception is the engine returning normally
    assert run_captured(checker).result.value is None


def test_nothing_is_kept_when_switched_off(make_agent, monkeypatch):
    monkeypatch.setenv("HUGIND_RECYCLE", "0")
    agent = make_agent({"main.js": "export default () => 1;"})
    for _ in range(3):
        run_captured(agent)
    assert recycle.kept_count() == 0


def test_strict_runs_neither_start_on_nor_leave_a_kept_instance(make_agent):
    agent = make_agent({"main.js": LEAVER})
    run_captured(agent, "a")
    run_captured(agent, "b")
    assert recycle.kept_count() == 1
    taken = recycle.stats.taken
    for i in range(3):
        assert run_captured(agent, f"s{i}", strict=True).result.value == [None, 1]
    assert recycle.stats.taken == taken  # every strict run instantiated afresh
    assert recycle.kept_count() == 1  # and left nothing (room was there for one more)


def test_an_agents_own_wasm_is_never_kept_whatever_it_exports(tmp_path):
    # Its code may write tables or drop segments, which no reset undoes; naming
    # its exports like the snapshot's reset handles changes nothing.
    wat = """(module (memory (export "memory") 1) (global (mut i32) (i32.const 0)) (table 1 funcref)
      (export "__hugind_snapshot_global_0" (global 0)) (export "__hugind_snapshot_table_0" (table 0))
      (func (export "_start") (global.set 0 (i32.const 1))))"""
    path = tmp_path / "agent.wasm"
    path.write_bytes(wasmtime.wat2wasm(wat))
    for _ in range(3):
        run_captured(path)
    assert recycle.kept_count() == 0
    assert not recycle.allowed(load_agent_module(path, EngineConfig(), None))


def test_concurrent_runs_each_see_only_their_own(make_agent):
    agent = make_agent({"main.js": LEAVER})
    failures: list[str] = []

    def worker(n: int) -> None:
        for i in range(15):
            tag = f"t{n}-{i}"
            captured = run_captured(agent, tag)
            if captured.result.value != [None, 1] or captured.stdout != f"out:{tag}\n":
                failures.append(f"{tag}: {captured.result.value!r} {captured.stdout!r}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert failures == []


@pytest.mark.parametrize(
    ("top", "private"),
    [
        (0x00, False),  # never touched: the file's page (or zero) on first access
        (0xA0, False),  # present, the image file's page
        (0xA1, False),  # same, mapped by this process only
        (0x80, True),  # present, a private copy
        (0x81, True),
        (0x40, True),  # swapped out, a private copy
        (0xC0, True),
        (0x60, False),  # swapped, the file's (a file page being migrated)
    ],
)
def test_which_pagemap_entries_are_private(top, private):
    assert private_pages._PRIVATE[top] == private


def _kept_memory(make_agent) -> tuple[recycle.Kept, int, int]:
    agent = make_agent({"main.js": LEAVER})
    for i in range(3):
        run_captured(agent, f"x{i}")
    kept = recycle.take(_pre())
    assert kept is not None
    run_captured(agent, "again")  # this one runs on a fresh instance: the kept one stays as it is
    memory = kept.memory
    # Write a few pages to make private copies, as a run would.
    size = memory.data_len(kept.store)
    for offset in (0, size // 3, size // 3 + 4096, size - 4096):
        memory.write(kept.store, b"\1", offset)
    return kept, ctypes.addressof(memory.data_ptr(kept.store).contents), size


def test_the_scan_and_the_entries_agree(make_agent, monkeypatch):
    _kept, base, size = _kept_memory(make_agent)  # kept: its memory stays mapped while it is read
    fd = private_pages._pagemap_fd()
    read = private_pages._read(fd, base, size)
    assert read, "a kept instance's memory has private pages"
    scanned = private_pages._scan(fd, base, size)
    if scanned is None:
        pytest.skip("this kernel has no PAGEMAP_SCAN (Linux < 6.7): the entries are read")
    assert scanned == read
    # Regions filled to the end of the vector: the walk goes on where it stopped.
    monkeypatch.setattr(private_pages, "_VEC_LEN", 1)
    assert private_pages._scan(fd, base, size) == read


def test_a_forked_child_reads_its_own_pagemap():
    buf = mmap.mmap(-1, 4 * private_pages.PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    buf[0:1] = b"x"  # present, private
    assert private_pages.private_runs(base, 4 * private_pages.PAGE) == [(0, private_pages.PAGE)]
    parent_fd = private_pages._fd
    pid = os.fork()
    if pid == 0:
        buf[private_pages.PAGE : private_pages.PAGE + 1] = b"y"  # the child's own private copy
        runs = private_pages.private_runs(base, 4 * private_pages.PAGE)
        ok = runs == [(0, 2 * private_pages.PAGE)] and private_pages._pid == os.getpid()
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert private_pages._fd == parent_fd
    assert private_pages.private_runs(base, 4 * private_pages.PAGE) == [(0, private_pages.PAGE)]
