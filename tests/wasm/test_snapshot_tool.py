"""hugind.wasm: the strict binary reader/writer and the generic snapshotter,
driven with small hand-written modules run in real wasmtime instances."""

from __future__ import annotations

import pytest
import wasmtime

from hugind.sandbox.js_engine import ENGINE_FILE
from hugind.wasm import binary as wb
from hugind.wasm.leb128 import WasmFormatError, read_signed, read_unsigned, signed, unsigned
from hugind.wasm.snapshot import SnapshotError, nonzero_runs, snapshot

STATEFUL = """
(module
  (memory (export "memory") 1 4)
  (global $counter (mut i32) (i32.const 7))
  (global $big (mut i64) (i64.const 0))
  (global $f (mut f32) (f32.const 0))
  (global $d (mut f64) (f64.const 0))
  (global $k i32 (i32.const 42))
  (data (i32.const 16) "hello")
  (func $ctor (global.set $counter (i32.add (global.get $counter) (i32.const 1))))
  (start $ctor)
  (func (export "_initialize") (global.set $counter (i32.add (global.get $counter) (i32.const 100))))
  (func (export "setup")
    (drop (memory.grow (i32.const 2)))
    (i32.store8 (i32.const 70000) (i32.const 9))
    (i32.store (i32.const 16) (i32.const 0x4a4a4a4a))
    (global.set $big (i64.const -5000000000))
    (global.set $f (f32.const 1.5))
    (global.set $d (f64.const -2.25)))
  (func (export "counter") (result i32) (global.get $counter))
  (func (export "big") (result i64) (global.get $big))
  (func (export "f") (result f32) (global.get $f))
  (func (export "d") (result f64) (global.get $d))
  (func (export "k") (result i32) (global.get $k)))
"""


def _call_setup(store: wasmtime.Store, instance: wasmtime.Instance) -> None:
    exports = instance.exports(store)
    exports["_initialize"](store)
    exports["setup"](store)


def _instantiate(wasm: bytes) -> tuple[wasmtime.Store, wasmtime.InstanceExports]:
    engine = wasmtime.Engine()
    store = wasmtime.Store(engine)
    instance = wasmtime.Instance(store, wasmtime.Module(engine, wasm), [])
    return store, instance.exports(store)


def test_snapshot_keeps_memory_and_globals_and_drops_initializers():
    snap = snapshot(wasmtime.wat2wasm(STATEFUL), _call_setup)
    store, exports = _instantiate(snap)
    # start (+1) and _initialize (+100) ran once, at snapshot time, and never again
    assert exports["counter"](store) == 108
    assert "_initialize" not in [e.name for e in wb.exports(wb.parse(snap))]
    assert wb.parse(snap).find(wb.START) is None
    assert exports["big"](store) == -5000000000
    assert exports["f"](store) == 1.5
    assert exports["d"](store) == -2.25
    assert exports["k"](store) == 42  # immutable globals keep their initialiser
    memory = exports["memory"]
    assert memory.size(store) == 3  # min pages = the size after the set-up
    assert wb.memories(wb.parse(snap))[0].max == 4
    data = memory.read(store, 0, memory.data_len(store))
    assert data[16:21] == b"JJJJo" and data[70000] == 9


@pytest.mark.parametrize(
    ("wat", "reason"),
    [
        ('(module (memory 1) (data "x") (func (export "go")))', "passive data"),
        ('(module (import "m" "mem" (memory 1)))', "imports memory"),
        ('(module (import "m" "g" (global i32)) (memory 1))', "imports global"),
        ("(module (memory 1) (memory 1))", "2 memories"),
        ("(module)", "0 memories"),
        ("(module (memory 1) (global (mut funcref) (ref.null func)))", "not a number type"),
        ('(module (memory 1) (func (export "__hugind_snapshot_x")))', "reserved"),
    ],
)
def test_snapshot_refuses_what_it_cannot_reproduce(wat, reason):
    with pytest.raises(SnapshotError, match=reason):
        snapshot(wasmtime.wat2wasm(wat), lambda store, instance: None)


def test_snapshot_refuses_a_set_up_that_changes_a_table():
    wat = """
    (module (memory 1) (table 2 funcref) (func $a) (elem (i32.const 0) $a)
      (func (export "go") (table.set (i32.const 1) (ref.func $a))))
    """

    def go(store, instance):
        instance.exports(store)["go"](store)

    with pytest.raises(SnapshotError, match="table"):
        snapshot(wasmtime.wat2wasm(wat), go)
    # the same module with a set-up that leaves the table alone is fine
    snapshot(wasmtime.wat2wasm(wat), lambda store, instance: None)


def test_a_set_up_that_calls_the_host_is_refused_not_run():
    wat = """
    (module (import "hugind" "call" (func $c (param i32 i32) (result i32))) (memory 1)
      (func (export "go") (drop (call $c (i32.const 0) (i32.const 0)))))
    """

    def go(store, instance):
        instance.exports(store)["go"](store)

    with pytest.raises(SnapshotError, match="set-up"):
        snapshot(wasmtime.wat2wasm(wat), go)


def test_a_set_up_that_never_ends_is_stopped():
    wat = '(module (memory 1) (func (export "go") (loop (br 0))))'

    def go(store, instance):
        instance.exports(store)["go"](store)

    with pytest.raises(SnapshotError):
        snapshot(wasmtime.wat2wasm(wat), go, fuel=100_000)


def test_nonzero_runs_cover_every_nonzero_byte_and_merge_short_gaps():
    image = bytearray(10_000)
    image[5] = 1
    image[20] = 2  # 14 zeros between: merged
    image[5000:5003] = b"abc"
    runs = nonzero_runs(bytes(image), gap=64)
    assert runs == [(5, bytes(image[5:21])), (5000, b"abc")]
    rebuilt = bytearray(len(image))
    for offset, chunk in runs:
        rebuilt[offset : offset + len(chunk)] = chunk
    assert rebuilt == image
    assert nonzero_runs(bytes(100)) == []


def test_the_engine_round_trips_byte_for_byte():
    wasm = ENGINE_FILE.read_bytes()
    assert wb.parse(wasm).to_bytes() == wasm


def test_leb128_is_strict():
    for value in (0, 1, 127, 128, 624485, 2**32 - 1):
        assert read_unsigned(unsigned(value), 0) == (value, len(unsigned(value)))
    for value in (0, -1, 63, -64, 64, -65, 2**31 - 1, -(2**31)):
        assert read_signed(signed(value), 0, 32) == (value, len(signed(value)))
    assert read_signed(signed(-(2**63)), 0, 64)[0] == -(2**63)
    bad = [
        (b"\x80\x80\x80\x80\x80\x00", "longer"),  # 6 bytes for a u32
        (b"\xff\xff\xff\xff\x1f", "too large"),  # 2**32+ in a u32
        (b"\x80", "end of data"),
    ]
    for raw, why in bad:
        with pytest.raises(WasmFormatError, match=why):
            read_unsigned(raw, 0)
    with pytest.raises(WasmFormatError, match="out of range"):
        read_signed(b"\xff\xff\xff\xff\x4f", 0, 32)


def test_malformed_modules_are_refused_with_a_reason():
    with pytest.raises(WasmFormatError, match="magic"):
        wb.parse(b"\0asm\x02\0\0\0")
    with pytest.raises(WasmFormatError, match="past the end"):
        wb.parse(wb.MAGIC + b"\x01\x10\x00")
    with pytest.raises(WasmFormatError, match="out of order"):
        wb.parse(wb.MAGIC + b"\x05\x01\x00\x01\x01\x00")
    with pytest.raises(SnapshotError, match="cannot snapshot"):
        snapshot(wb.MAGIC + b"\x05\x02\x01\x00", lambda s, i: None)  # a vector of 1 memory, cut short
