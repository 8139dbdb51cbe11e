"""Kept instances (hugind/sandbox/recycle.py), the cases its mutation run found
untested (issue #32): when an instance must be dropped rather than kept, how
many are kept and taken, and what ``give_back`` answers (its caller drops the
store when it says False, and must not when it says True).

Most tests drive ``give_back``/``take`` directly with real instances of a small
module ("the toy") that exports what the JS engine's snapshot exports for its
reset (memory, mutable globals, a table) and a ``fingerprint`` of all of that,
so a kept instance and a fresh one can be compared from inside wasm. recycle.py
treats any module registered with ``allow`` the same way; the JS engine's own
runs are the subject of test_recycle.py and of the last test here.
"""

from __future__ import annotations

import sys
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import wasmtime

from hugind.sandbox import raw_ffi, recycle, wasi_relay
from hugind.sandbox.engine import EngineConfig, get_engine
from hugind.sandbox.js_engine import engine_module
from tests.runtime.helpers import run_captured

PAGE = 65536
MEMORY_PAGES = 80  # 5 MiB: room for more private bytes than recycle.MAX_PRIVATE_BYTES

# The snapshot's reset handles are mutable number globals and tables; ``fingerprint``
# reads every byte of memory, both globals and both sizes.
TOY = """
(module
  (import "t" "relays" (func $relays (param i32)))
  (memory $m {memory_pages})
  (export "{memory_name}" (memory $m))
  (global $a (mut i32) (i32.const 7))
  (global $b (mut i64) (i64.const -3))
  (global $c {extra_global})
  (table $t 2 funcref)
  (export "__hugind_snapshot_global_0" (global $a))
  (export "__hugind_snapshot_global_1" (global $b))
  (export "{extra_name}" (global $c))
  (export "__hugind_snapshot_table_0" (table $t))
  (func (export "fill") (param $at i32) (param $len i32) (param $byte i32)
    (memory.fill (local.get $at) (local.get $byte) (local.get $len)))
  (func (export "set_globals") (param i32 i64)
    (global.set $a (local.get 0))
    (global.set $b (local.get 1)))
  (func (export "grow_memory") (result i32) (memory.grow (i32.const 1)))
  (func (export "grow_table") (result i32) (table.grow $t (ref.null func) (i32.const 1)))
  (func (export "make_relays") (param i32) (call $relays (local.get 0)))
  (func (export "fingerprint") (result i64 i32 i64 i32 i32)
    (local $i i32) (local $end i32) (local $h i64)
    (local.set $end (i32.mul (memory.size) (i32.const 65536)))
    (local.set $h (i64.const 0xcbf29ce484222325))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $h (i64.mul (i64.xor (local.get $h) (i64.load (local.get $i))) (i64.const 0x100000001b3)))
        (local.set $i (i32.add (local.get $i) (i32.const 8)))
        (br $next)))
    (local.get $h) (global.get $a) (global.get $b) (table.size $t) (memory.size)))
"""
# Each call of the host's ``relays`` makes a relay instance in the calling store (the
# WASI guard and clock do so in a run, wasi_relay.py): grown, it is not handed on, so the
# next call makes another.
_RELAY = wasi_relay.RelaySpec((("sched_yield", ()),), 1, 4)


@dataclass
class Toy:
    engine: wasmtime.Engine
    module: wasmtime.Module
    pre: wasmtime.InstancePre

    def instance(self) -> recycle.Kept:
        """A fresh instance, as GuestInstance makes one."""
        store = wasmtime.Store(self.engine)
        store.set_wasi(wasmtime.WasiConfig())
        store.set_epoch_deadline(1 << 40)
        instance = self.pre.instantiate(store)
        exports = instance.exports(store)
        memory = next(item for item in exports.values() if isinstance(item, wasmtime.Memory))
        return recycle.Kept(store, instance, memory)

    def give_back(self, kept: recycle.Kept) -> bool:
        return recycle.give_back(self.pre, self.module, self.engine, kept)

    def take(self) -> recycle.Kept | None:
        kept = recycle.take(self.pre)
        if kept is not None:
            kept.store.set_epoch_deadline(1 << 40)  # as the next run does
        return kept

    def prime(self) -> None:
        """The first instance given back is never kept (as the first run of a module in a process)."""
        assert self.give_back(self.instance()) is False


def call(kept: recycle.Kept, name: str, *args: int) -> object:
    return kept.instance.exports(kept.store)[name](kept.store, *args)


def fingerprint(kept: recycle.Kept) -> list[int]:
    return list(call(kept, "fingerprint"))  # type: ignore[arg-type]


def _relays(caller: wasmtime.Caller, count: int) -> None:
    for _ in range(count):
        relay = wasi_relay.instantiate(_toy_engine(), caller, _RELAY)
        relay.memory.grow(caller, 1)


def _toy_engine() -> wasmtime.Engine:
    return get_engine(EngineConfig())


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    if not raw_ffi.enabled():
        pytest.skip("wasmtime-py's public path keeps no instances")
    monkeypatch.delenv("HUGIND_RECYCLE", raising=False)
    recycle.clear()
    yield
    recycle.clear()


def make_toy(
    memory_name: str = "memory",
    extra: tuple[str, str] = ("__hugind_snapshot_global_2", "(mut f64) (f64.const 0.5)"),
) -> Toy:
    """A module of its own (so a shelf of its own, as in a fresh process), allowed to be kept."""
    engine = _toy_engine()
    extra_name, extra_global = extra
    wat = TOY.format(
        memory_pages=MEMORY_PAGES, memory_name=memory_name, extra_name=extra_name, extra_global=extra_global
    )
    module = wasmtime.Module(engine, wat)
    recycle.allow(module)
    assert recycle.allowed(module)
    linker = wasmtime.Linker(engine)
    linker.define_wasi()
    linker.define_func("t", "relays", wasmtime.FuncType([wasmtime.ValType.i32()], []), _relays, access_caller=True)
    return Toy(engine, module, linker.instantiate_pre(module))


@pytest.fixture
def toy() -> Toy:
    return make_toy()


def test_give_back_keeps_from_the_second_instance_up_to_the_bound_and_says_so(toy):
    taken = recycle.stats.taken
    assert toy.take() is None  # nothing given back yet
    answers, counts = [], []
    for _ in range(recycle.MAX_KEPT + 3):
        answers.append(toy.give_back(toy.instance()))
        counts.append(recycle.kept_count())
    # The first is never kept, then up to MAX_KEPT wait, and the rest are refused.
    assert answers == [False] + [True] * recycle.MAX_KEPT + [False, False]
    assert counts == [0, *range(1, recycle.MAX_KEPT + 1), recycle.MAX_KEPT, recycle.MAX_KEPT]
    got = [toy.take() for _ in range(recycle.MAX_KEPT + 1)]
    assert all(kept is not None for kept in got[:-1]) and got[-1] is None
    assert len({id(kept.store) for kept in got[:-1]}) == recycle.MAX_KEPT  # each kept instance once
    assert recycle.kept_count() == 0
    assert recycle.stats.taken - taken == recycle.MAX_KEPT  # a take that found none is not counted


def test_a_kept_instance_is_what_a_fresh_one_is(toy):
    fresh = fingerprint(toy.instance())
    assert fresh[1:] == [7, -3, 2, MEMORY_PAGES]
    toy.prime()

    def run(kept: recycle.Kept) -> None:
        # Writes at the start, in the middle, across a page boundary and up to the last byte.
        writes = ((0, 8, 1), (PAGE * 7 + 5, 3000, 2), (PAGE * 40 - 4, 8, 3), (PAGE * MEMORY_PAGES - 9, 9, 4))
        for at, length, byte in writes:
            call(kept, "fill", at, length, byte)
        call(kept, "set_globals", 99, 1 << 40)

    # (Not fingerprinted before it is given back: reading all of memory maps the kernel's
    # zero page into the untouched pages, which the pagemap shows as private pages.)
    used, witness = toy.instance(), toy.instance()
    run(used)
    run(witness)
    assert fingerprint(witness) != fresh
    assert toy.give_back(used)
    kept = toy.take()
    assert kept is not None and kept.store is used.store
    assert fingerprint(kept) == fresh


def test_a_run_that_left_exactly_the_private_bytes_allowed_is_kept_and_one_more_page_is_not(toy):
    toy.prime()
    fresh = fingerprint(toy.instance())
    # Not from offset 0: a wrong sum of the runs (their ends, not their lengths) would show.
    start = 16 * 4096
    at_bound = toy.instance()
    call(at_bound, "fill", start, recycle.MAX_PRIVATE_BYTES, 0x5A)
    assert toy.give_back(at_bound) is True
    kept = toy.take()
    assert kept is not None and fingerprint(kept) == fresh  # all of it copied back

    over = toy.instance()
    call(over, "fill", start, recycle.MAX_PRIVATE_BYTES + 4096, 0x5A)
    assert toy.give_back(over) is False
    assert recycle.kept_count() == 0 and toy.take() is None


def test_a_store_that_made_the_bound_of_relays_is_kept_and_one_past_it_is_not(toy):
    toy.prime()
    at_bound = toy.instance()
    call(at_bound, "make_relays", wasi_relay.MAX_PER_STORE)
    assert wasi_relay.made(at_bound.memory) == wasi_relay.MAX_PER_STORE
    assert toy.give_back(at_bound) is True
    assert toy.take() is not None

    past = toy.instance()
    call(past, "make_relays", wasi_relay.MAX_PER_STORE + 1)
    assert toy.give_back(past) is False
    assert recycle.kept_count() == 0


@pytest.mark.parametrize(("grow", "size_before"), [("grow_memory", MEMORY_PAGES), ("grow_table", 2)])
def test_a_run_that_grew_memory_or_a_table_is_dropped(toy, grow, size_before):
    toy.prime()
    grown = toy.instance()
    assert call(grown, grow) == size_before  # grown by one
    assert toy.give_back(grown) is False
    assert toy.take() is None
    # An instance that did not grow is still kept: the refusal was the growth's.
    assert toy.give_back(toy.instance()) is True


def test_nothing_is_given_back_when_switched_off(toy, monkeypatch):
    monkeypatch.setenv("HUGIND_RECYCLE", "0")
    assert [toy.give_back(toy.instance()) for _ in range(3)] == [False] * 3
    assert recycle.kept_count() == 0 and toy.take() is None


@pytest.mark.parametrize(
    ("memory_name", "extra"),
    [
        # The reset reads the fresh state through the export named "memory".
        ("mem", ("__hugind_snapshot_global_2", "(mut f64) (f64.const 0.5)")),
        # A reset handle that is no number (the snapshot's are all numbers).
        ("memory", ("__hugind_snapshot_global_2", "(mut funcref) (ref.null func)")),
    ],
    ids=["memory-not-exported-as-memory", "a-global-that-is-no-number"],
)
def test_a_module_whose_fresh_state_cannot_be_read_keeps_nothing(memory_name, extra):
    toy = make_toy(memory_name, extra)
    assert [toy.give_back(toy.instance()) for _ in range(4)] == [False] * 4
    assert recycle.kept_count() == 0 and toy.take() is None


def test_a_reset_that_fails_keeps_nothing():
    # An immutable global among the reset handles: setting it back is refused by wasmtime.
    toy = make_toy(extra=("__hugind_snapshot_global_2", "i32 (i32.const 5)"))
    toy.prime()
    used = toy.instance()
    call(used, "set_globals", 1, 2)
    assert toy.give_back(used) is False
    assert recycle.kept_count() == 0 and toy.take() is None


def test_instances_given_back_at_once_are_kept_up_to_the_bound(toy):
    # The bound is checked before the reset and again after it (the reset runs unlocked):
    # of instances given back together, at most MAX_KEPT are kept, and give_back is True
    # for exactly those.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        toy.prime()
        for _ in range(20):
            recycle.clear()
            instances = [toy.instance() for _ in range(8)]
            for kept in instances:  # private pages to copy back: a reset that takes a while
                call(kept, "fill", 0, 32 * 4096, 1)
            answers: list[bool] = []
            barrier = threading.Barrier(len(instances))

            def give(kept: recycle.Kept, answers: list[bool] = answers, barrier: threading.Barrier = barrier) -> None:
                barrier.wait()
                answers.append(toy.give_back(kept))

            threads = [threading.Thread(target=give, args=(kept,)) for kept in instances]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
            assert recycle.kept_count() == answers.count(True) == recycle.MAX_KEPT, answers
    finally:
        sys.setswitchinterval(interval)


def test_the_js_engines_first_run_in_a_process_is_not_kept_and_later_runs_start_on_kept_ones(make_agent, monkeypatch):
    # As in a fresh process: no shelf for the engine yet.
    monkeypatch.setattr(recycle, "_shelves", weakref.WeakKeyDictionary())
    agent = make_agent({"main.js": "globalThis.n = (globalThis.n ?? 0) + 1; export default () => globalThis.n;"})
    taken = recycle.stats.taken
    counts, values = [], []
    for _ in range(5):
        values.append(run_captured(agent).result.value)
        counts.append(recycle.kept_count())
    assert values == [1] * 5  # every run saw a fresh module state
    assert counts == [0, 1, 1, 1, 1]
    assert recycle.stats.taken - taken == 3  # runs 3, 4 and 5
    assert recycle.allowed(engine_module(EngineConfig()))
