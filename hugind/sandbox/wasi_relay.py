"""wasmtime's own WASI functions, callable from Python: the relay instances.

A Python wrapper that shadows a WASI function (``wasi_guard.py``,
``wasi_clock.py``) cannot simply call wasmtime's implementation: WASI finds the
memory through the calling instance's ``memory`` export, and a call from Python
has no calling instance. A relay is a tiny module that imports the real
functions and exports one-line wasm forwarders plus a memory of its own; made
in the guest's store, its forwarders are wasm callers, and every pointer they
pass is relative to the relay's memory, which the guest cannot reach.

The module and a linker holding the real WASI are made once per engine (and
relay layout); each store that needs a relay instantiates it on first use.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

import wasmtime

from hugind.errors import EngineError

WASI = "wasi_snapshot_preview1"
PAGE = 65536

# WASI preview 1 errno values.
ESUCCESS = 0
EACCES = 2
EFAULT = 21
EISDIR = 31
EINVAL = 28
ENAMETOOLONG = 37
ENOMEM = 48
ENOTSUP = 58
EPERM = 63


@dataclass(frozen=True)
class RelaySpec:
    """The WASI functions a relay forwards (name, parameter types; each returns
    an errno) and its memory's page limits."""

    functions: tuple[tuple[str, tuple[str, ...]], ...]
    min_pages: int
    max_pages: int

    def wat(self) -> str:
        imports, forwarders = [], []
        for name, params in self.functions:
            sig = " ".join(f"(param {p})" for p in params) + " (result i32)"
            args = " ".join(f"(local.get {i})" for i in range(len(params)))
            imports.append(f'(import "{WASI}" "{name}" (func ${name} {sig}))')
            forwarders.append(f'(func (export "{name}") {sig} (call ${name} {args}))')
        memory = f'(memory (export "memory") {self.min_pages} {self.max_pages})'
        return "\n".join(["(module", *imports, memory, *forwarders, ")"])


@dataclass(frozen=True)
class Relay:
    memory: wasmtime.Memory
    functions: dict[str, wasmtime.Func]


_built: weakref.WeakKeyDictionary[wasmtime.Engine, tuple[wasmtime.Linker, dict[RelaySpec, wasmtime.Module]]] = (
    weakref.WeakKeyDictionary()
)
_built_lock = threading.Lock()


def _linked(engine: wasmtime.Engine, spec: RelaySpec) -> tuple[wasmtime.Linker, wasmtime.Module]:
    with _built_lock:
        built = _built.get(engine)
        if built is None:
            linker = wasmtime.Linker(engine)
            linker.define_wasi()
            built = _built[engine] = (linker, {})
        linker, modules = built
        module = modules.get(spec)
        if module is None:
            module = modules[spec] = wasmtime.Module(engine, spec.wat())
        return linker, module


def instantiate(engine: wasmtime.Engine, store: wasmtime.Caller, spec: RelaySpec) -> Relay:
    """A relay of ``spec`` in the caller's store."""
    linker, module = _linked(engine, spec)
    exports = linker.instantiate(store, module).exports(store)
    memory = exports["memory"]
    functions = {name: exports[name] for name, _ in spec.functions}
    if not isinstance(memory, wasmtime.Memory) or not all(isinstance(f, wasmtime.Func) for f in functions.values()):
        raise EngineError("a WASI relay module does not export what it should")
    return Relay(memory, functions)  # type: ignore[arg-type]
