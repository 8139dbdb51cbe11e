"""Looking up and calling a guest's exports without wasmtime-py's generic wrappers.

``Instance.exports(store)`` wraps every export of the instance (the JS engine
has a dozen) the first time it is asked, and ``Func.__call__`` re-reads and
boxes the function's type on every call: together ~0.1-0.3 ms per run, more
than instantiating the module. The signature of each export is a property of
the module, so it is read once per module here (``ExportTable``); an
instance then fetches only the exports it uses, by index, and calls the ones
whose parameters and results are all ``i32`` through
``wasmtime_func_call_unchecked`` with a raw value array. That is sound
because the types were checked against the module itself; an export of any
other signature goes through ``Func.__call__`` as before.

When raw_ffi.py finds wasmtime's private bindings changed (or
``HUGIND_RAW_FFI=0``), exports are looked up through ``Instance.exports`` and
called through ``Func.__call__``: the same values, more slowly.

Errors surface exactly as from ``Func.__call__``: a Python exception raised
by a host function defined through wasmtime-py's trampoline (wasi_guard.py)
is re-raised as itself, then a WASI exit as ``wasmtime.ExitTrap``, a trap as
``wasmtime.Trap``, any other error as ``wasmtime.WasmtimeError``.
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from dataclasses import dataclass

import wasmtime
from wasmtime import _ffi as ffi
from wasmtime import _func as wasmtime_func

from hugind.sandbox import raw_ffi


@dataclass(frozen=True)
class ExportSig:
    index: int  # position in the instance's export list (the module's order)
    kind: str  # "func", "memory", "global", "table", "other"
    nparams: int = 0
    nresults: int = 0
    raw: bool = False  # every parameter and result is an i32: callable unchecked


class ExportTable:
    """The exports of one module, by name (read once per module)."""

    def __init__(self, module: wasmtime.Module) -> None:
        i32 = wasmtime.ValType.i32()
        self.by_name: dict[str, ExportSig] = {}
        for index, export in enumerate(module.exports):
            ty = export.type
            if isinstance(ty, wasmtime.FuncType):
                params, results = ty.params, ty.results
                raw = len(results) <= 1 and all(t == i32 for t in (*params, *results))
                sig = ExportSig(index, "func", len(params), len(results), raw)
            elif isinstance(ty, wasmtime.MemoryType):
                sig = ExportSig(index, "memory")
            else:
                sig = ExportSig(index, "other")
            self.by_name.setdefault(export.name, sig)

    def func(self, name: str) -> ExportSig | None:
        sig = self.by_name.get(name)
        return sig if sig is not None and sig.kind == "func" else None


_tables: weakref.WeakKeyDictionary[wasmtime.Module, ExportTable] = weakref.WeakKeyDictionary()
_tables_lock = threading.Lock()


def export_table(module: wasmtime.Module) -> ExportTable:
    with _tables_lock:
        table = _tables.get(module)
    if table is None:
        table = ExportTable(module)
        with _tables_lock:
            _tables[module] = table
    return table


def export_at(store: wasmtime.Store, instance: wasmtime.Instance, index: int) -> ffi.wasmtime_extern_t:
    """The instance's export number ``index`` (raw; the caller knows its kind from the table).
    The raw path only: the ``*_at`` functions below choose."""
    item = ffi.wasmtime_extern_t()
    name_ptr = ctypes.POINTER(ctypes.c_char)()
    name_len = ctypes.c_size_t(0)
    found = ffi.wasmtime_instance_export_nth(
        store._context(),
        ctypes.byref(instance._instance),
        index,
        ctypes.byref(name_ptr),
        ctypes.byref(name_len),
        ctypes.byref(item),
    )
    if not found:
        raise wasmtime.WasmtimeError(f"the instance has no export number {index}")
    return item


def _public_at(store: wasmtime.Store, instance: wasmtime.Instance, index: int, kind: type) -> object | None:
    """Export number ``index`` through the public API; None on the raw path."""
    if raw_ffi.enabled():
        return None
    item = instance.exports(store).by_index[index]
    if not isinstance(item, kind):
        raise wasmtime.WasmtimeError(f"export number {index} is not a {kind.__name__}")
    return item


def memory_at(store: wasmtime.Store, instance: wasmtime.Instance, index: int) -> wasmtime.Memory:
    public = _public_at(store, instance, index, wasmtime.Memory)
    if public is not None:
        return public  # type: ignore[return-value]
    return wasmtime.Memory._from_raw(export_at(store, instance, index).of.memory)


def func_at(store: wasmtime.Store, instance: wasmtime.Instance, index: int) -> wasmtime.Func:
    public = _public_at(store, instance, index, wasmtime.Func)
    if public is not None:
        return public  # type: ignore[return-value]
    return wasmtime.Func._from_raw(export_at(store, instance, index).of.func)


def global_at(store: wasmtime.Store, instance: wasmtime.Instance, index: int) -> wasmtime.Global:
    public = _public_at(store, instance, index, wasmtime.Global)
    if public is not None:
        return public  # type: ignore[return-value]
    return wasmtime.Global._from_raw(export_at(store, instance, index).of.global_)


def table_at(store: wasmtime.Store, instance: wasmtime.Instance, index: int) -> wasmtime.Table:
    public = _public_at(store, instance, index, wasmtime.Table)
    if public is not None:
        return public  # type: ignore[return-value]
    return wasmtime.Table._from_raw(export_at(store, instance, index).of.table)


def call(store: wasmtime.Store, func: wasmtime.Func, sig: ExportSig, args: tuple[int, ...]) -> int | None:
    """Call ``func`` (whose signature ``sig`` says is all-i32) with ``args``."""
    if not sig.raw:
        return func(store, *args)
    if len(args) != sig.nparams:  # said the same way on both paths
        raise wasmtime.WasmtimeError(f"the export takes {sig.nparams} parameters, {len(args)} given")
    if not raw_ffi.enabled():
        return func(store, *args)
    return _call_raw(store, func, sig, args)


def _call_raw(store: wasmtime.Store, func: wasmtime.Func, sig: ExportSig, args: tuple[int, ...]) -> int | None:
    values = (ffi.wasmtime_val_raw_t * max(sig.nparams, sig.nresults, 1))()
    for i, value in enumerate(args):
        values[i].i32 = value
    trap = ctypes.POINTER(ffi.wasm_trap_t)()
    error = ffi.wasmtime_func_call_unchecked(
        store._context(), ctypes.byref(func._func), values, len(values), ctypes.byref(trap)
    )
    if error:
        failure: Exception = wasmtime.WasmtimeError._from_ptr(error)
    elif trap:
        failure = wasmtime.Trap._from_ptr(trap)
    else:
        return values[0].i32 if sig.nresults else None
    wasmtime_func.maybe_raise_last_exn()  # what a trampoline-defined import raised comes first
    raise failure
