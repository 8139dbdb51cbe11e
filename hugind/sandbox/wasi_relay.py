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

A store lives on past its run when recycle.py keeps it, and every run then
asks for its relays again: each is made once per store and handed back to
the next run of that store, its memory zeroed (a run never sees what one
before wrote there). A relay whose memory a run grew is not handed back (a
fresh one starts at its minimum); a store that has made ``MAX_PER_STORE``
relays is not kept (recycle.py asks ``made``), so a kept store holds a
bounded number of instances however many runs it serves. Stores are told
apart by wasmtime's store id, which is never reused in a process.
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field

import wasmtime

from hugind.errors import EngineError
from hugind.sandbox import raw_ffi

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


def guest_memory(caller: wasmtime.Caller) -> wasmtime.Memory:
    """The calling guest's ``memory`` export, trapping as wasmtime's own WASI does without one."""
    memory = caller.get("memory")
    if not isinstance(memory, wasmtime.Memory):
        raise wasmtime.Trap("missing required memory export")
    return memory


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


MAX_PER_STORE = 8  # relay instances a store may have made and still be kept (recycle.py)
_RECENT = 64  # stores not (yet) kept whose relays are remembered: the most recent ones


@dataclass
class _StoreRelays:
    relays: dict[RelaySpec, Relay] = field(default_factory=dict)
    made: int = 0  # instances made in the store, over its life


@dataclass
class Stats:
    """Counts over the process's life: for tests."""

    made: int = 0  # relay instances made, in every store


stats = Stats()

# store id -> its relays. Kept stores stay until their Store object goes; the others are
# forgotten oldest first (a store that is never kept is dropped after its run).
_kept: dict[int, _StoreRelays] = {}
_recent: OrderedDict[int, _StoreRelays] = OrderedDict()
_stores_lock = threading.Lock()


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


def store_id(memory: wasmtime.Memory) -> int | None:
    """The id of the store ``memory`` belongs to (None on wasmtime-py's public path: no private fields)."""
    if not raw_ffi.enabled():
        return None
    return int(memory._memory._anon_1.store_id)


def _caller_store(caller: wasmtime.Caller) -> int | None:
    if not isinstance(caller, wasmtime.Caller):
        return None  # a relay asked for outside a guest's call: made anew, as before
    memory = caller.get("memory")
    return store_id(memory) if isinstance(memory, wasmtime.Memory) else None


def _entry(sid: int) -> _StoreRelays:
    """(Under the lock.)"""
    entry = _kept.get(sid)
    if entry is None:
        entry = _recent.get(sid)
        if entry is None:
            entry = _recent[sid] = _StoreRelays()
            while len(_recent) > _RECENT:
                _recent.popitem(last=False)
        else:
            _recent.move_to_end(sid)
    return entry


def store_kept(store: wasmtime.Store, memory: wasmtime.Memory) -> None:
    """recycle.py keeps ``store`` (whose guest memory is ``memory``): its relays stay known
    until the Store object goes."""
    sid = store_id(memory)
    if sid is None:
        return
    with _stores_lock:
        if sid in _kept:
            return
        _kept[sid] = _recent.pop(sid, None) or _StoreRelays()
    weakref.finalize(store, _forget, sid)


def _forget(sid: int) -> None:
    with _stores_lock:
        _kept.pop(sid, None)


def made(memory: wasmtime.Memory) -> int:
    """How many relay instances the store of ``memory`` has made."""
    sid = store_id(memory)
    if sid is None:
        return 0
    with _stores_lock:
        entry = _kept.get(sid) or _recent.get(sid)
        return entry.made if entry is not None else 0


def instantiate(engine: wasmtime.Engine, store: wasmtime.Caller, spec: RelaySpec) -> Relay:
    """A relay of ``spec`` in the caller's store: the one it already has, else a new one."""
    sid = _caller_store(store)
    if sid is not None:
        with _stores_lock:
            relay = _entry(sid).relays.pop(spec, None)  # taken: two runs never share one at a time
        if relay is not None and _reusable(store, relay, spec):
            with _stores_lock:
                _entry(sid).relays[spec] = relay
            return relay
    relay = _instantiate(engine, store, spec)
    if sid is not None:
        with _stores_lock:
            entry = _entry(sid)
            entry.relays[spec] = relay
            entry.made += 1
    return relay


def _reusable(store: wasmtime.Caller, relay: Relay, spec: RelaySpec) -> bool:
    """Zero the relay's memory for its next run; False if a run grew it (a fresh one is smaller)."""
    size = relay.memory.data_len(store)
    if size != spec.min_pages * PAGE:
        return False
    ctypes.memset(ctypes.addressof(relay.memory.data_ptr(store).contents), 0, size)
    return True


def _instantiate(engine: wasmtime.Engine, store: wasmtime.Caller, spec: RelaySpec) -> Relay:
    stats.made += 1
    linker, module = _linked(engine, spec)
    exports = linker.instantiate(store, module).exports(store)
    memory = exports["memory"]
    functions = {name: exports[name] for name, _ in spec.functions}
    if not isinstance(memory, wasmtime.Memory) or not all(isinstance(f, wasmtime.Func) for f in functions.values()):
        raise EngineError("a WASI relay module does not export what it should")
    return Relay(memory, functions)  # type: ignore[arg-type]
