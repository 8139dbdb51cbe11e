"""The raw path's self-test: each private binding it uses, used once on a tiny module.

raw_ffi.py runs this before the first raw call of a process. Every answer is
known in advance and chosen so that a binding that went wrong gives another
one: arguments of both signs and in a fixed order (a slot read at the wrong
offset, or the wrong half of it, changes them), an i64 parameter whose two
halves differ, a failure that must come back as the handler's own exception.
It uses the same functions the raw path calls, never the switching ones
(those would ask raw_ffi, which is deciding).

Costs ~2-10 ms once per process (the module is compiled by an engine of its own,
with no epoch or fuel to set up, on this thread).
"""

from __future__ import annotations

import ctypes

import wasmtime
from wasmtime import _ffi as ffi

from hugind.sandbox import raw_export, raw_import

_WAT = """
(module
  (import "t" "two" (func $two (param i32 i32) (result i32)))
  (import "t" "four" (func $four (param i32 i32 i32 i32) (result i32)))
  (import "t" "wide" (func $wide (param i32 i64 i32) (result i32)))
  (memory (export "memory") 1)
  (global (export "g") (mut i32) (i32.const 7))
  (global (export "h") (mut i64) (i64.const -3))
  (table (export "t") 3 funcref)
  (func (export "two") (param i32 i32) (result i32) (call $two (local.get 0) (local.get 1)))
  (func (export "four") (param i32 i32 i32 i32) (result i32)
    (call $four (local.get 0) (local.get 1) (local.get 2) (local.get 3)))
  (func (export "wide") (param i32 i64 i32) (result i32) (call $wide (local.get 0) (local.get 1) (local.get 2)))
  (func (export "id") (param i32) (result i32) (local.get 0))
)
"""


class _Sentinel(Exception):
    """What the failing handler raises: the trap must hand back this very object."""


class SelfTestFailed(Exception):
    pass


def _expect(what: str, got: object, want: object) -> None:
    if got != want:
        raise SelfTestFailed(f"{what}: got {got!r}, expected {want!r}")


def run() -> str | None:
    """None when every answer is right; else the first one that is not."""
    try:
        _run()
    except SelfTestFailed as exc:
        return f"self-test: {exc}"
    return None


def _run() -> None:
    config = wasmtime.Config()
    config.parallel_compilation = False  # a thread pool for one tiny module costs ~60 ms to start
    config.cranelift_opt_level = "none"
    engine = wasmtime.Engine(config)
    linker = wasmtime.Linker(engine)
    i32, i64 = wasmtime.ValType.i32(), wasmtime.ValType.i64()
    seen: list[tuple[int, ...]] = []
    sentinel = _Sentinel("self-test failure")

    def two(caller: wasmtime.Caller, a: int, b: int) -> int:
        seen.append((a, b))
        memory = caller.get("memory")  # the Caller the raw path built works as wasmtime-py's does
        if not isinstance(memory, wasmtime.Memory):
            raise SelfTestFailed("a raw import's caller does not find the module's memory")
        if a == 13:
            raise sentinel
        return a * 3 - b

    def four(_caller: wasmtime.Caller, a: int, b: int, c: int, d: int) -> int:
        return a + 10 * b + 100 * c + 1000 * d

    def wide(_caller: wasmtime.Caller, a: int, low: int, c: int) -> int:
        return a * 1_000_000 + low * 10 + c

    four_type = wasmtime.FuncType([i32] * 4, [i32])
    raw_import._define_raw(linker, "t", "two", 2, two, wasmtime.FuncType([i32, i32], [i32]))
    raw_import._define_raw(linker, "t", "four", 4, four, four_type)
    raw_import._define_raw(linker, "t", "wide", 3, wide, wasmtime.FuncType([i32, i64, i32], [i32]))
    module = wasmtime.Module(engine, _WAT)
    store = wasmtime.Store(engine)
    instance = linker.instantiate(store, module)
    table = raw_export.ExportTable(module)

    def export(name: str, kind: str) -> ffi.wasmtime_extern_t:
        sig = table.by_name[name]
        _expect(f"the kind of export {name!r}", sig.kind, kind)
        return raw_export.export_at(store, instance, sig.index)

    def call(name: str, *args: int) -> int | None:
        func = wasmtime.Func._from_raw(export(name, "func").of.func)
        return raw_export._call_raw(store, func, table.by_name[name], args)

    _expect("a raw call of a raw import (i32, i32)", call("two", -7, 100_000), -100_021)
    _expect("the arguments the handler saw", seen, [(-7, 100_000)])
    _expect("a raw call with four arguments", call("four", 1, 2, 3, -4), -3679)
    _expect("a raw call of an identity", call("id", -2_000_000_000), -2_000_000_000)
    # A parameter of another type: the handler reads the low half, as the raw path documents.
    wide_func = wasmtime.Func._from_raw(export("wide", "func").of.func)
    _expect("an i64 parameter's low half", wide_func(store, 5, (77 << 32) | 9, -6), 5_000_084)
    _expect("a raw call through a store", raw_import._call_i32_raw(store, _func(store, instance, table, "id"), 41), 41)
    _check_failure(lambda: call("two", 13, 0), sentinel)
    _check_exports(store, instance, export)
    _check_store_ids(engine, linker, module, store, instance, export)


def _func(
    store: wasmtime.Store, instance: wasmtime.Instance, table: raw_export.ExportTable, name: str
) -> wasmtime.Func:
    return wasmtime.Func._from_raw(raw_export.export_at(store, instance, table.by_name[name].index).of.func)


def _check_failure(call: object, sentinel: BaseException) -> None:
    raw_import.take_failure()
    try:
        call()  # type: ignore[operator]
    except (wasmtime.Trap, wasmtime.WasmtimeError):  # as GuestInstance.enter takes either
        _expect("the exception a failing raw import raised", raw_import.take_failure(), sentinel)
    else:
        raise SelfTestFailed("a raw import that raised did not trap the guest")


def _check_store_ids(
    engine: wasmtime.Engine,
    linker: wasmtime.Linker,
    module: wasmtime.Module,
    store: wasmtime.Store,
    instance: wasmtime.Instance,
    export: object,
) -> None:
    """wasi_relay.py tells stores apart by the id a memory carries: it must be the store's."""
    memory = wasmtime.Memory._from_raw(export("memory", "memory").of.memory)  # type: ignore[operator]
    mine = memory._memory._anon_1.store_id
    _expect("a memory's store id", mine, instance._instance.store_id)
    other_store = wasmtime.Store(engine)
    other = linker.instantiate(other_store, module)
    if not mine or other._instance.store_id in (0, mine):
        raise SelfTestFailed("two stores do not have two store ids")


def _check_exports(store: wasmtime.Store, instance: wasmtime.Instance, export: object) -> None:
    find = export  # type: ignore[assignment]
    memory = wasmtime.Memory._from_raw(find("memory", "memory").of.memory)  # type: ignore[operator]
    _expect("the memory's size", memory.data_len(store), 65536)
    memory.write(store, b"hugind", 100)
    base = ctypes.addressof(memory.data_ptr(store).contents)
    _expect("the memory's bytes", ctypes.string_at(base + 100, 6), b"hugind")
    table = wasmtime.Table._from_raw(find("t", "other").of.table)  # type: ignore[operator]
    _expect("the table's size", table.size(store), 3)
    glob = wasmtime.Global._from_raw(find("g", "other").of.global_)  # type: ignore[operator]
    _expect("a global's value", glob.value(store), 7)
    # What recycle.py does: read a global's value raw, let it change, set it back raw.
    value = ffi.wasmtime_val_t()
    ffi.wasmtime_global_get(store._context(), ctypes.byref(glob._global), ctypes.byref(value))
    _expect("a raw global's kind", value.kind, ffi.WASMTIME_I32.value)
    glob.set_value(store, 99)
    error = ffi.wasmtime_global_set(store._context(), ctypes.byref(glob._global), ctypes.byref(value))
    if error:
        raise SelfTestFailed(f"setting a global raw: {wasmtime.WasmtimeError._from_ptr(error)}")
    _expect("a global set back raw", glob.value(store), 7)
    wide = wasmtime.Global._from_raw(find("h", "other").of.global_)  # type: ignore[operator]
    ffi.wasmtime_global_get(store._context(), ctypes.byref(wide._global), ctypes.byref(value))
    _expect("a raw i64 global", (value.kind, value.of.i64), (ffi.WASMTIME_I64.value, -3))
