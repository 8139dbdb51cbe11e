"""hugind.wasm.code_scan: finding code that can change a table or a segment (what
a reset of memory and globals would not undo), failing closed on what it cannot
decode; and the snapshot's reset handles, exported only for code that passes."""

from __future__ import annotations

import pytest
import wasmtime

from hugind.sandbox.js_engine import ENGINE_FILE
from hugind.wasm import binary as wb
from hugind.wasm.code_scan import state_writer
from hugind.wasm.snapshot import is_state_export, snapshot


def _code(wat: str) -> bytes | None:
    return wb.parse(wasmtime.wat2wasm(wat)).payload(wb.CODE)


# Every immediate form the scan must step over without losing its place.
PLAIN = """
(module
  (type $t (func (param i32) (result i32)))
  (memory 1)
  (table 2 funcref)
  (global $g (mut i32) (i32.const 0))
  (func $id (type $t) (local.get 0))
  (elem (i32.const 0) $id)
  (func (export "f") (param i32) (result i32) (local i64 f32 f64)
    (block $out (result i32)
      (loop $again
        (br_if $again (i32.eqz (local.get 0)))
        (br_table 0 1 0 (i32.const 2) (local.get 0)))
      (i32.const -1))
    (drop)
    (i64.store offset=8 align=4 (i32.const 0) (i64.const -9000000000))
    (f32.store (i32.const 16) (f32.const 1.5))
    (f64.store (i32.const 24) (f64.const -2.25))
    (memory.copy (i32.const 0) (i32.const 8) (i32.const 8))
    (memory.fill (i32.const 0) (i32.const 0) (i32.const 4))
    (drop (memory.grow (i32.const 0)))
    (drop (memory.size))
    (drop (table.size 0))
    (drop (table.get 0 (i32.const 0)))
    (drop (ref.is_null (ref.null func)))
    (drop (ref.func $id))
    (drop (select (result i32) (i32.const 1) (i32.const 2) (local.get 0)))
    (drop (i32.trunc_sat_f32_s (f32.const 3)))
    (drop (i32.extend8_s (i32.const 255)))
    (global.set $g (i32.const 1))
    (if (local.get 0) (then (nop)) (else (unreachable)))
    (call_indirect (type $t) (i32.const 7) (i32.const 0))))
"""


def test_code_that_writes_no_table_and_no_segment_passes():
    assert state_writer(_code(PLAIN)) is None
    assert state_writer(None) is None


@pytest.mark.parametrize(
    ("body", "found"),
    [
        ("(table.set 0 (i32.const 0) (ref.null func))", "table.set"),
        ("(drop (table.grow 0 (ref.null func) (i32.const 1)))", "table.grow"),
        ("(table.fill 0 (i32.const 0) (ref.null func) (i32.const 1))", "table.fill"),
        ("(table.copy (i32.const 0) (i32.const 1) (i32.const 1))", "table.copy"),
        ("(table.init $e (i32.const 0) (i32.const 0) (i32.const 0))", "table.init"),
        ("(elem.drop $e)", "elem.drop"),
        ("(memory.init $d (i32.const 0) (i32.const 0) (i32.const 0))", "memory.init"),
        ("(data.drop $d)", "data.drop"),
        ("(drop (i32x4.extract_lane 0 (v128.const i32x4 0 0 0 0)))", "instruction 0xfd"),
        ("(drop (i32.atomic.load (i32.const 0)))", "instruction 0xfe"),
    ],
)
def test_code_that_may_change_state_or_is_unknown_is_named(body, found):
    wat = f"""(module (memory 1 1 shared) (table 2 funcref) (func $f)
      (elem $e func $f) (data $d "x")
      (func (export "g") {body}))"""
    reason = state_writer(_code(wat))
    assert reason is not None and found in reason and reason.startswith("function 1:")


def test_a_body_that_cannot_be_decoded_fails_closed():
    code = _code(PLAIN)
    assert code is not None
    assert state_writer(code[:-3]) is not None  # cut inside the last function
    assert state_writer(code[:1] + b"\xff\xff\xff\xff\x0f" + code[6:]) is not None  # a body longer than the section


def test_the_shipped_engine_passes():
    # Its snapshot then exports the reset handles (tests/runtime/test_snapshot.py checks them).
    assert state_writer(wb.parse(ENGINE_FILE.read_bytes()).payload(wb.CODE)) is None


STATEFUL = """
(module
  (memory (export "memory") 1)
  (table 1 funcref)
  (global $n (mut i32) (i32.const 0))
  (func (export "setup") (global.set $n (i32.const 5))))
"""


def test_the_reset_handles_are_exported_only_when_asked():
    def setup(store: wasmtime.Store, instance: wasmtime.Instance) -> None:
        instance.exports(store)["setup"](store)

    wasm = wasmtime.wat2wasm(STATEFUL)
    plain = {e.name for e in wb.exports(wb.parse(snapshot(wasm, setup)))}
    handled = snapshot(wasm, setup, export_state=True)
    names = {e.name for e in wb.exports(wb.parse(handled))}
    assert not any(is_state_export(name) for name in plain)
    assert names - plain == {"__hugind_snapshot_global_0", "__hugind_snapshot_table_0"}
    engine = wasmtime.Engine()
    store = wasmtime.Store(engine)
    instance = wasmtime.Instance(store, wasmtime.Module(engine, handled), [])
    assert instance.exports(store)["__hugind_snapshot_global_0"].value(store) == 5


def test_code_that_writes_a_table_gets_no_reset_handles():
    def setup(store: wasmtime.Store, instance: wasmtime.Instance) -> None:
        instance.exports(store)["setup"](store)

    grow = '(func (export "grow") (drop (table.grow 0 (ref.null func) (i32.const 1))))'
    writer = STATEFUL.replace('(func (export "setup")', grow + '\n  (func (export "setup")')
    names = {e.name for e in wb.exports(wb.parse(snapshot(wasmtime.wat2wasm(writer), setup, export_state=True)))}
    assert "grow" in names
    assert not any(is_state_export(name) for name in names)
