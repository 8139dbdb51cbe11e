"""Host imports defined through wasmtime's unchecked callback: the hot path of every host call.

wasmtime-py's ordinary host functions go through a generic trampoline that
wraps every parameter and result in ``Val`` objects and compares value types
by allocating new ones: ~10 us per crossing, more than a whole ``fs.exists``
needs on the host. The hugind imports take and return only ``i32``s, so they
are defined with ``wasmtime_linker_define_func_unchecked`` instead: the
callback reads its arguments straight out of the raw value array and writes
the result into its first slot (~1 us per crossing).

Errors: an exception in a handler becomes a trap (the guest stops at once,
as with the ordinary trampoline) and is kept for this thread; the code that
entered the guest calls ``take_failure()`` when the call ends in a trap and
re-raises the original exception (a ``LimitExceeded``, say).

This uses wasmtime-py's private ``_ffi`` bindings: raw_ffi.py checks them
once per process, and when they are not what hugind expects (or
``HUGIND_RAW_FFI=0``), every import is defined through wasmtime-py's public
``Linker.define_func`` instead, with the same arguments, results and errors
(an exception a handler raises then reaches the code that entered the guest
as itself, re-raised by wasmtime-py, rather than through ``take_failure``).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable

import wasmtime
from wasmtime import _ffi as ffi

from hugind.sandbox import raw_ffi

# handler(caller, *i32 args) -> i32
RawHandler = Callable[..., int]

_TRAP_MESSAGE = b"hugind host import failed"
_NO_FINALIZER = ctypes.cast(0, ctypes.CFUNCTYPE(None, ctypes.c_void_p))
# The C side holds raw pointers to the callbacks: they must live as long as the process.
_keep_alive: list[object] = []


class _Failure(threading.local):
    exc: BaseException | None = None


_failure = _Failure()


def take_failure() -> BaseException | None:
    """The exception that made this thread's last guest call trap, if a raw import raised it (cleared)."""
    exc, _failure.exc = _failure.exc, None
    return exc


def define(
    linker: wasmtime.Linker,
    module: str,
    name: str,
    nparams: int,
    handler: RawHandler,
    params: list[wasmtime.ValType] | None = None,
) -> None:
    """Define ``module.name``, ``(i32 x nparams) -> i32``, served by ``handler(caller, *args)``.

    ``params`` may declare other parameter types (an i64 the handler ignores:
    it reads every slot as an i32, the low half of a wider value)."""
    i32 = wasmtime.ValType.i32()
    functype = wasmtime.FuncType(params or [i32] * nparams, [i32])
    if raw_ffi.enabled():
        _define_raw(linker, module, name, nparams, handler, functype)
    else:
        _define_public(linker, module, name, handler, functype)


def _i32(value: int) -> int:
    """``value``'s low 32 bits as a signed i32: what the raw path reads out of a value slot."""
    return ((value & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000


def _define_public(
    linker: wasmtime.Linker, module: str, name: str, handler: RawHandler, functype: wasmtime.FuncType
) -> None:
    """The same import through wasmtime-py's typed trampoline: every argument as the raw
    path reads it (an i64's low half), the result stored as an i32 slot would store it."""

    # The trampoline calls this from within its try: ctrl_c.py may raise Ctrl-C below it.
    def serve_typed(caller: wasmtime.Caller, *args: int) -> int:
        return _i32(handler(caller, *(_i32(a) for a in args)))

    linker.define_func(module, name, functype, serve_typed, access_caller=True)


def _define_raw(
    linker: wasmtime.Linker, module: str, name: str, nparams: int, handler: RawHandler, functype: wasmtime.FuncType
) -> None:
    # Everything that may raise runs in serve(), called from within enter()'s try: ctrl_c.py
    # raises a KeyboardInterrupt only below serve(), never in enter() or its except clause,
    # where it would escape into wasmtime (seen: SIGSEGV when one hit Caller(...) in enter()).
    def serve(caller_ptr: object, values: ctypes.Array) -> None:
        caller = wasmtime.Caller(caller_ptr)  # type: ignore[arg-type]
        try:
            # The hugind imports' arities spelled out: a generator costs more than the values.
            if nparams == 2:
                values[0].i32 = handler(caller, values[0].i32, values[1].i32)
            elif nparams == 4:
                values[0].i32 = handler(caller, values[0].i32, values[1].i32, values[2].i32, values[3].i32)
            else:
                values[0].i32 = handler(caller, *(values[i].i32 for i in range(nparams)))
        finally:
            caller._invalidate()  # as wasmtime-py's trampoline: the caller dies with the call

    def enter(_env: object, caller_ptr: object, values: ctypes.Array, _count: int) -> int:
        try:
            serve(caller_ptr, values)
            return 0
        except BaseException as exc:
            _failure.exc = exc
            trap = ffi.wasmtime_trap_new(ctypes.create_string_buffer(_TRAP_MESSAGE), len(_TRAP_MESSAGE))
            return ctypes.cast(trap, ctypes.c_void_p).value or 0

    raw = ffi.wasmtime_func_unchecked_callback_t(enter)
    _keep_alive.append(raw)
    module_bytes, name_bytes = module.encode(), name.encode()
    error = ffi.wasmtime_linker_define_func_unchecked(
        linker.ptr(),
        ctypes.create_string_buffer(module_bytes),
        len(module_bytes),
        ctypes.create_string_buffer(name_bytes),
        len(name_bytes),
        functype.ptr(),
        raw,
        None,
        _NO_FINALIZER,
    )
    if error:
        raise wasmtime.WasmtimeError._from_ptr(error)


def call_i32(caller: wasmtime.Caller, func: wasmtime.Func, *args: int) -> int:
    """Call ``func``, of type ``(i32 x len(args)) -> i32``, without wasmtime-py's typed trampoline.

    The caller vouches for the signature (the relays' forwarders are ours):
    ``Func.__call__`` re-reads and boxes the function type on every call,
    ~0.1 ms, which a guest reading stdin a byte at a time pays per byte.
    Raises ``wasmtime.Trap`` or ``wasmtime.WasmtimeError`` as ``Func.__call__`` does."""
    if not raw_ffi.enabled():
        return func(caller, *args)
    return _call_i32_raw(caller, func, *args)


def _call_i32_raw(caller: wasmtime.Caller | wasmtime.Store, func: wasmtime.Func, *args: int) -> int:
    values = (ffi.wasmtime_val_raw_t * max(len(args), 1))()
    for i, value in enumerate(args):
        values[i].i32 = value
    trap = ctypes.POINTER(ffi.wasm_trap_t)()
    error = ffi.wasmtime_func_call_unchecked(
        caller._context(), ctypes.byref(func._func), values, len(values), ctypes.byref(trap)
    )
    if error:
        raise wasmtime.WasmtimeError._from_ptr(error)
    if trap:
        raise wasmtime.Trap._from_ptr(trap)
    return values[0].i32
