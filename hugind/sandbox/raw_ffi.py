"""Whether host calls take the raw fast path (raw_import.py, raw_export.py) or wasmtime-py's public API.

The raw path calls wasmtime's C API through wasmtime-py's private ``_ffi``
bindings, with ctypes signatures hugind does not own. Were a new wasmtime to
change one (a parameter added, a struct laid out anew), ctypes would not
notice: the call would go through and hand the guest a wrong result, or
corrupt memory. So before the first raw call of a process, every private
symbol the raw path uses is checked:

* present, with the ctypes signature and struct layouts this file records
  (``_EXPECTED``: one short digest per symbol, of argument and result types,
  field names, offsets and sizes: ``python -m hugind.sandbox.raw_ffi`` prints
  them for the installed wasmtime);
* then used, on a tiny module, through exactly the functions the raw path
  calls: each must give the known answer (raw_selftest.py, handed down by
  engine.py as ``SELF_TEST``).

Any mismatch, and the process takes the public path (the same behaviour,
~10x slower per host call) after one warning on stderr. ``HUGIND_RAW_FFI=0``
chooses the public path without a check or a warning (the differential tests
compare the two paths with it). Kept instances (recycle.py) reset globals
through the same private bindings: on the public path nothing is kept.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from collections.abc import Callable

from hugind.sha256 import sha256

ENV = "HUGIND_RAW_FFI"

# The C functions the raw path calls (through wasmtime._ffi's wrappers) and the types it builds.
FUNCTIONS = (
    "wasmtime_linker_define_func_unchecked",
    "wasmtime_func_call_unchecked",
    "wasmtime_trap_new",
    "wasmtime_instance_export_nth",
    "wasmtime_global_get",
    "wasmtime_global_set",
)
TYPES = (
    "wasmtime_func_unchecked_callback_t",
    "wasmtime_val_raw_t",
    "wasmtime_val_t",
    "wasmtime_extern_t",
    "wasmtime_func_t",
    "wasm_trap_t",
)
# wasmtime-py's own private names the raw path relies on (wasmtime attribute paths).
ATTRIBUTES = (
    "Caller._invalidate",
    "Caller._context",
    "Store._context",
    "Func._from_raw",
    "Memory._from_raw",
    "Global._from_raw",
    "Table._from_raw",
    "WasmtimeError._from_ptr",
    "Trap._from_ptr",
    "_func.maybe_raise_last_exn",
)
CONSTANTS = ("WASMTIME_I32", "WASMTIME_I64", "WASMTIME_F32", "WASMTIME_F64")

# Digests of the shapes above as wasmtime-py 50 declares them (``python -m hugind.sandbox.raw_ffi``).
_EXPECTED = {
    "wasmtime_linker_define_func_unchecked": "500be6a39f53cb59",
    "wasmtime_func_call_unchecked": "c910c3d606207dab",
    "wasmtime_trap_new": "954ce1e6289b6a74",
    "wasmtime_instance_export_nth": "14f2dc6fc2a3394b",
    "wasmtime_global_get": "0dd5e9b798b7abfb",
    "wasmtime_global_set": "d5c5356529b712b4",
    "wasmtime_func_unchecked_callback_t": "101fc552957c2616",
    "wasmtime_val_raw_t": "47205c7d841e7eb3",
    "wasmtime_val_t": "faaf8c2237bcb5a5",
    "wasmtime_extern_t": "a8111652a6bb28b2",
    "wasmtime_func_t": "6597563ac0e5ff1e",
    "wasm_trap_t": "6d229884c1268bb0",
}

# The self-test (raw_selftest.run), handed down by engine.py, which makes every engine
# hugind runs a guest on: it exercises raw_import and raw_export, which import this
# module, so this module cannot import it.
SELF_TEST: Callable[[], str | None] | None = None

_lock = threading.Lock()
_raw: bool | None = None
reason: str | None = None  # why the public path was taken (None: raw, or chosen by ENV)


def enabled() -> bool:
    """True: the raw path (checked once per process). Cheap after the first call."""
    raw = _raw
    if raw is None:
        raw = _decide()
    return raw


def _decide() -> bool:
    global _raw, reason
    with _lock:
        if _raw is not None:
            return _raw
        if os.environ.get(ENV, "1").strip().lower() in ("0", "off", "no", "false"):
            _raw = False
            return False
        problem = check()
        if problem is not None:
            reason = problem
            sys.stderr.write(
                f"hugind: warning: wasmtime's private bindings are not what hugind expects ({problem}); "
                "host calls take wasmtime-py's public API instead (slower)\n"
            )
            sys.stderr.flush()
        _raw = problem is None
        return _raw


def check() -> str | None:
    """None when every private symbol is as expected and answers right; else what is not."""
    try:
        shapes = signatures()
    except Exception as exc:  # a symbol missing, a binding module renamed: anything is a no
        return f"cannot read the bindings: {exc.__class__.__name__}: {exc}"
    changed = [name for name, digest in _EXPECTED.items() if shapes.get(name) != digest]
    if changed:
        return "changed: " + ", ".join(changed)
    if SELF_TEST is None:  # no engine was made through engine.py: the shapes alone decide
        return None
    try:
        return SELF_TEST()
    except Exception as exc:
        return f"self-test failed: {exc.__class__.__name__}: {exc}"


def signatures() -> dict[str, str]:
    """A digest of each symbol's shape as the installed wasmtime-py declares it.
    Raises when one is missing."""
    import wasmtime
    from wasmtime import _bindings, _ffi

    for path in ATTRIBUTES:
        target: object = wasmtime
        for part in path.split("."):
            target = getattr(target, part)
    for name in CONSTANTS:
        getattr(_ffi, name)
    shapes = {}
    for name in FUNCTIONS:
        wrapper = getattr(_ffi, name)
        cfunc = getattr(_bindings, "_" + name)  # the ctypes function the wrapper calls
        nargs = wrapper.__code__.co_argcount
        described = f"({nargs}) " + _describe_function(cfunc.restype, cfunc.argtypes)
        shapes[name] = _digest(described)
    for name in TYPES:
        shapes[name] = _digest(_describe(getattr(_ffi, name)))
    return shapes


def _digest(text: str) -> str:
    return sha256(text.encode()).hexdigest()[:16]


def _describe_function(restype: object, argtypes: object) -> str:
    args = ", ".join(_describe(t) for t in (argtypes or ()))
    return f"{_describe(restype)}({args})"


def _describe(t: object, depth: int = 0) -> str:
    """The ABI of a ctypes type: what the C side sees, not the Python names of the classes."""
    if t is None:
        return "void"
    if depth > 6:
        return "..."
    if isinstance(t, type) and issubclass(t, ctypes._Pointer):
        return "*" + _describe(t._type_, depth + 1)
    if isinstance(t, type) and issubclass(t, ctypes.Array):
        return f"[{t._length_}]" + _describe(t._type_, depth + 1)
    if isinstance(t, type) and issubclass(t, ctypes._CFuncPtr):
        return "fn " + _describe_function(t._restype_, t._argtypes_)
    if isinstance(t, type) and issubclass(t, ctypes.Structure | ctypes.Union):
        kind = "union" if issubclass(t, ctypes.Union) else "struct"
        fields = getattr(t, "_fields_", None)
        if not fields:
            return "opaque"
        inner = ", ".join(
            f"{field[0]}@{getattr(t, field[0]).offset}:{_describe(field[1], depth + 1)}" for field in fields
        )
        return f"{kind}{ctypes.sizeof(t)}{{{inner}}}"
    code = getattr(t, "_type_", None)
    if isinstance(code, str):
        return f"{code}{ctypes.sizeof(t)}"  # type: ignore[arg-type]
    return repr(t)


def _reset_for_tests() -> None:
    global _raw, reason
    with _lock:
        _raw, reason = None, None


if __name__ == "__main__":
    for symbol, digest in signatures().items():
        print(f'    "{symbol}": "{digest}",')
