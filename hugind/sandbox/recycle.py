"""A finished guest's instance kept for the next run of the same module, first put
back exactly as a fresh instantiation leaves it.

Why: a fresh instance of the JS engine's snapshot pays, per run, its
instantiation, ~85 copy-on-write page faults as the run first writes pages of
the image (~1.9 us each, the kernel copying the page), and the store's drop
(unmapping those pages). A kept instance pays none of these; its reset copies
back only the pages that are no longer the image's own (docs/design.md,
"Recycled instances"; bench/instance_start.py measures both).

What "exactly as fresh" covers, all the state wasm code can observe:

* Linear memory: the same size as at instantiation (a run that grew it is not
  kept) and every byte equal to a fresh instance's. wasmtime maps the image
  privately from a sealed memfd: a page the run never wrote is still that
  file's page, and the kernel turns any page written, even once, into a
  private copy. Every page the kernel reports as no longer the file's
  (private_pages.py) is copied back from an instance of the module that never
  runs (one per module, made when the first instance is kept). Nothing is
  guessed: a page is trusted only when the kernel shows it is the image
  file's. When the kernel cannot say, nothing is kept.
* Mutable globals: set back to their starting values (the snapshot exports
  them for this: hugind/wasm/snapshot.py, ``export_state``).
* Tables: their size is checked; their elements cannot change, because the
  engine's code holds no instruction that writes a table (checked when the
  snapshot is made; js_snapshot.py).
* WASI: the run's context (its stdio callbacks, argv, env, preopened
  directories, open files) is dropped at once; the next run sets its own.
  The relay instances the WASI guard and the clock made in the store
  (wasi_relay.py) are handed to the next run with their memory zeroed, so a
  store holds a bounded number of them; one that has made more than
  ``wasi_relay.MAX_PER_STORE`` is not kept.

Only modules registered with ``allow`` are kept: the JS engine's snapshot,
hugind's own code built from pinned sources. An agent's own ``.wasm`` is
never kept (its code may write tables or drop segments, which no reset can
undo). Only an instance whose export calls all returned and that was never
interrupted is kept (GuestInstance decides): not because the reset could not
undo the rest, but as the conservative rule.

The first run of a module in a process is never kept: a one-shot ``hugind
run`` must not pay for a reset and a never-run instance it will not use. From
the second on, up to ``MAX_KEPT`` instances per module wait, each holding the
private pages its runs wrote (~0.25 MiB for a trivial agent). ``HUGIND_RECYCLE=0``
keeps none: every run then gets a fresh instance; so does wasmtime-py's public
path (raw_ffi.py), since the reset sets globals through the private bindings.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

import wasmtime
from wasmtime import _ffi as ffi

from hugind.sandbox import raw_export, raw_ffi, wasi_relay
from hugind.sandbox.private_pages import private_runs
from hugind.wasm.snapshot import RESERVED_PREFIX, is_state_export

MAX_KEPT = 2  # per module: instances waiting for a run
# A run that left more private pages than this is not kept: its reset (and the
# memory an idle instance holds) would cost more than a fresh instance saves.
MAX_PRIVATE_BYTES = 4 * 1024 * 1024

_NUMBER_KINDS = {kind.value for kind in (ffi.WASMTIME_I32, ffi.WASMTIME_I64, ffi.WASMTIME_F32, ffi.WASMTIME_F64)}


@dataclass
class Kept:
    """One instance between runs: what GuestInstance takes over instead of instantiating."""

    store: wasmtime.Store
    instance: wasmtime.Instance
    memory: wasmtime.Memory
    funcs: dict[str, Any] = field(default_factory=dict)  # exports fetched so far (GuestInstance._funcs)
    globals: list[wasmtime.Global] | None = None  # the reset handles, fetched on the first reset
    tables: list[wasmtime.Table] | None = None


@dataclass
class _Pristine:
    """What a fresh instance of the module holds: an instance that never runs.

    Its memory is the source of every page copied back. It is wasmtime's
    private mapping of the image, read and never written, so its pages stay
    the image file's own (shared with every instance, no private memory)."""

    store: wasmtime.Store
    memory: wasmtime.Memory
    length: int  # bytes of linear memory
    wasm_pages: int
    globals: list[tuple[int, ffi.wasmtime_val_t]]  # (export index, starting value as wasmtime holds it)
    tables: list[tuple[int, int]]  # (export index, size)


@dataclass
class Stats:
    """Counts over the process's life: for tests and the bench."""

    taken: int = 0  # runs that started on a kept instance


stats = Stats()


class _Shelf:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.finished = 0
        self.pristine: _Pristine | None = None
        self.unusable = False  # the pristine state could not be read: keep nothing
        self.kept: list[Kept] = []


_allowed: weakref.WeakSet[wasmtime.Module] = weakref.WeakSet()
_shelves: weakref.WeakKeyDictionary[wasmtime.InstancePre, _Shelf] = weakref.WeakKeyDictionary()
_shelves_lock = threading.Lock()


def allow(module: wasmtime.Module) -> None:
    """Let instances of ``module`` be kept: hugind's own engine, whose snapshot exports its reset handles."""
    names = {export.name for export in module.exports}
    if any(is_state_export(name) for name in names):
        _allowed.add(module)


def allowed(module: wasmtime.Module) -> bool:
    return module in _allowed


def take(pre: wasmtime.InstancePre) -> Kept | None:
    """A kept instance of ``pre``'s module, reset, for a new run; None: instantiate one."""
    shelf = _shelves.get(pre)
    if shelf is None or not shelf.kept:
        return None
    with shelf.lock:
        if not shelf.kept:
            return None
        stats.taken += 1
        return shelf.kept.pop()


def give_back(pre: wasmtime.InstancePre, module: wasmtime.Module, engine: wasmtime.Engine, kept: Kept) -> bool:
    """Reset ``kept`` (whose export calls all returned) and keep it for the next run.
    False: it was not kept, and the caller drops it as before."""
    if module not in _allowed or os.environ.get("HUGIND_RECYCLE") == "0" or not raw_ffi.enabled():
        return False
    if wasi_relay.made(kept.memory) > wasi_relay.MAX_PER_STORE:
        return False  # a store whose relays had to be made anew again and again
    with _shelves_lock:
        shelf = _shelves.get(pre)
        if shelf is None:
            shelf = _shelves[pre] = _Shelf()
    with shelf.lock:
        shelf.finished += 1
        if shelf.finished < 2 or shelf.unusable or len(shelf.kept) >= MAX_KEPT:
            return False
        pristine = shelf.pristine
    if pristine is None:
        pristine = _read_pristine(pre, module, engine)
        with shelf.lock:
            if pristine is None:
                shelf.unusable = True
                return False
            shelf.pristine = pristine
    try:
        if not reset(kept, pristine):
            return False
    except (wasmtime.WasmtimeError, OSError, ValueError):
        return False
    with shelf.lock:
        if len(shelf.kept) >= MAX_KEPT:
            return False
        shelf.kept.append(kept)
    wasi_relay.store_kept(kept.store, kept.memory)
    return True


def reset(kept: Kept, pristine: _Pristine) -> bool:
    """Put ``kept`` back as a fresh instance (the module docstring says what that covers).
    False: it cannot be (memory grown, a table resized, too many pages to restore)."""
    store, memory = kept.store, kept.memory
    if memory.size(store) != pristine.wasm_pages:
        return False
    if kept.globals is None or kept.tables is None:
        kept.globals = [raw_export.global_at(store, kept.instance, index) for index, _ in pristine.globals]
        kept.tables = [raw_export.table_at(store, kept.instance, index) for index, _ in pristine.tables]
    for table, (_, size) in zip(kept.tables, pristine.tables, strict=True):
        if table.size(store) != size:
            return False
    base = ctypes.addressof(memory.data_ptr(store).contents)
    length = memory.data_len(store)
    if length != pristine.length:
        return False
    runs = private_runs(base, length)
    if runs is None or sum(end - start for start, end in runs) > MAX_PRIVATE_BYTES:
        return False
    image = ctypes.addressof(pristine.memory.data_ptr(pristine.store).contents)
    for start, end in runs:
        ctypes.memmove(base + start, image + start, end - start)
    context = store._context()
    for glob, (_, value) in zip(kept.globals, pristine.globals, strict=True):
        # Raw: the snapshot's mutable globals are numbers (hugind/wasm/snapshot.py),
        # so the value read from the fresh instance needs no conversion or rooting.
        error = ffi.wasmtime_global_set(context, ctypes.byref(glob._global), ctypes.byref(value))
        if error:
            raise wasmtime.WasmtimeError._from_ptr(error)
    # The run's WASI context goes now: its files and preopened directories are
    # closed and its output callbacks released, not when the next run starts.
    store.set_wasi(wasmtime.WasiConfig())
    return True


def _read_pristine(pre: wasmtime.InstancePre, module: wasmtime.Module, engine: wasmtime.Engine) -> _Pristine | None:
    """The state of an instance that never ran (the snapshot has no start function:
    instantiating runs no guest code)."""
    store = wasmtime.Store(engine)
    store.set_wasi(wasmtime.WasiConfig())
    store.set_epoch_deadline(1)  # were any guest code to run, it would stop at once
    try:
        instance = pre.instantiate(store)
    except (wasmtime.WasmtimeError, wasmtime.Trap):
        return None
    table = raw_export.export_table(module)
    memory_sig = table.by_name.get("memory")
    if memory_sig is None or memory_sig.kind != "memory":
        return None
    memory = raw_export.memory_at(store, instance, memory_sig.index)
    globals_, tables = [], []
    for name, sig in table.by_name.items():
        if name.startswith(RESERVED_PREFIX + "global_"):
            value = ffi.wasmtime_val_t()
            glob = raw_export.global_at(store, instance, sig.index)
            ffi.wasmtime_global_get(store._context(), ctypes.byref(glob._global), ctypes.byref(value))
            if value.kind not in _NUMBER_KINDS:
                return None
            globals_.append((sig.index, value))
        elif name.startswith(RESERVED_PREFIX + "table_"):
            tables.append((sig.index, raw_export.table_at(store, instance, sig.index).size(store)))
    return _Pristine(store, memory, memory.data_len(store), memory.size(store), globals_, tables)


def kept_count() -> int:
    """Instances waiting, over all modules: for tests and the bench."""
    with _shelves_lock:
        shelves = list(_shelves.values())
    return sum(len(shelf.kept) for shelf in shelves)


@atexit.register
def clear() -> None:
    """Drop every kept instance and every never-run one (at exit, before the interpreter's finalization)."""
    with _shelves_lock:
        shelves = list(_shelves.values())
    for shelf in shelves:
        with shelf.lock:
            shelf.kept.clear()
            shelf.pristine = None
