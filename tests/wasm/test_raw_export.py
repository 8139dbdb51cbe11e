"""Guest exports looked up by index and called unchecked (hugind/sandbox/raw_export.py):
the same values, errors and exits as wasmtime-py's ``Func.__call__``, and a
fallback to it for any export that is not all-i32."""

from __future__ import annotations

import pytest
import wasmtime

from hugind.sandbox import raw_export
from hugind.sandbox.engine import EngineConfig, get_engine

WAT = """
(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (import "host" "boom" (func $boom))
  (memory (export "memory") 1)
  (global $g (mut i32) (i32.const 0))
  (func (export "add") (param i32 i32) (result i32) (i32.add (local.get 0) (local.get 1)))
  (func (export "neg") (param i32) (result i32) (i32.sub (i32.const 0) (local.get 0)))
  (func (export "wide") (param i64) (result i64) (i64.mul (local.get 0) (i64.const 3)))
  (func (export "bump") (global.set $g (i32.add (global.get $g) (i32.const 1))))
  (func (export "count") (result i32) (global.get $g))
  (func (export "trap") (result i32) unreachable)
  (func (export "leave") (call $exit (i32.const 7)))
  (func (export "raise") (call $boom))
)
"""


class Boom(Exception):
    pass


@pytest.fixture
def guest():
    engine = get_engine(EngineConfig())
    module = wasmtime.Module(engine, wasmtime.wat2wasm(WAT))
    linker = wasmtime.Linker(engine)
    linker.define_wasi()

    def boom() -> None:
        raise Boom("raised by the host")

    linker.define_func("host", "boom", wasmtime.FuncType([], []), boom)
    store = wasmtime.Store(engine)
    store.set_wasi(wasmtime.WasiConfig())
    store.set_epoch_deadline(1 << 30)
    instance = linker.instantiate(store, module)
    table = raw_export.export_table(module)

    def call(name: str, *args: int):
        sig = table.func(name)
        assert sig is not None
        return raw_export.call(store, raw_export.func_at(store, instance, sig.index), sig, args)

    return table, call, store, instance


def test_the_table_reads_each_signature_once_per_module(guest):
    table, _, _, _ = guest
    assert table.func("add") == raw_export.ExportSig(table.by_name["add"].index, "func", 2, 1, True)
    assert table.func("bump").raw and table.func("bump").nresults == 0
    assert not table.func("wide").raw  # i64: the checked path
    assert table.func("memory") is None and table.by_name["memory"].kind == "memory"
    assert table.func("missing") is None


def test_values_pass_both_ways_and_i32_wraps_as_wasm_does(guest):
    _, call, _, _ = guest
    assert call("add", 2, 40) == 42
    assert call("neg", 5) == -5
    assert call("add", 2**31 - 1, 1) == -(2**31)
    assert call("wide", 2**40) == 3 * 2**40  # through Func.__call__


def test_state_changes_are_seen_by_later_calls(guest):
    _, call, _, _ = guest
    assert call("bump") is None
    call("bump")
    assert call("count") == 2


def test_a_wrong_argument_count_is_refused_before_the_call(guest):
    _, call, _, _ = guest
    with pytest.raises(wasmtime.WasmtimeError, match="takes 2 parameters, 1 given"):
        call("add", 1)


def test_a_trap_raises_the_trap_with_its_code(guest):
    _, call, _, _ = guest
    with pytest.raises(wasmtime.Trap) as info:
        call("trap")
    assert info.value.trap_code == wasmtime.TrapCode.UNREACHABLE


def test_proc_exit_raises_exit_trap_with_the_status(guest):
    _, call, _, _ = guest
    with pytest.raises(wasmtime.ExitTrap) as info:
        call("leave")
    assert info.value.code == 7


def test_an_exception_of_a_python_import_comes_back_as_itself(guest):
    _, call, _, _ = guest
    with pytest.raises(Boom, match="raised by the host"):
        call("raise")
    assert call("add", 1, 1) == 2  # and nothing of it lingers for the next call


def test_the_memory_export_is_the_instances_own(guest):
    table, _, store, instance = guest
    memory = raw_export.memory_at(store, instance, table.by_name["memory"].index)
    assert memory.data_len(store) == 65536
