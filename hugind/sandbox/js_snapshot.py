"""The snapshot of the JS engine: what runs once, before any agent exists.

``build_snapshot`` runs the engine's WASI constructors and its own set-up
(QuickJS runtime and context, the prelude evaluated, the dispatcher kept)
through ``hugind_js_configure(0, 0)``, which sets no limits, and keeps the
result as a module (hugind/wasm/snapshot.py). Nothing of a run is in it: the
set-up sees an empty WASI context and every hugind import traps. What each
instance must own (Math.random's seed, performance.timeOrigin, the JS heap and
stack limits) is set by the engine after instantiation; runtimes/wasm/ABI.md,
"Snapshot start", lists it.
"""

from __future__ import annotations

import wasmtime

from hugind.wasm.snapshot import SnapshotError, snapshot

# Part of the cache key: bump when what build_snapshot produces changes for the same engine.
FORMAT = 2  # 2: the reset handles are exported, heap headroom (recycle.py)
WASM_PAGE = 65536
HEAP_ROOM = ((1, 16), (2, 4), (4, 2))  # (pages per run, runs): 2 MiB of address space


def _prepare(store: wasmtime.Store, instance: wasmtime.Instance) -> None:
    exports = instance.exports(store)
    configure = exports.get("hugind_js_configure")
    if not isinstance(configure, wasmtime.Func):
        raise SnapshotError("the engine does not export 'hugind_js_configure'; it is not a hugind JS engine")
    init = exports.get("_initialize")
    if isinstance(init, wasmtime.Func):
        init(store)
    status = configure(store, 0, 0)
    if status != 0:
        raise SnapshotError(f"the engine's set-up failed (hugind_js_configure returned {status})")
    # Room for a run's allocations inside the image's memory, so that a small run
    # does not grow the memory and its instance can be kept for the next run
    # (recycle.py). The engine's libc allocator (zig's) takes whole 64 KiB pages
    # from the memory for each size class and keeps freed page runs by their
    # size without joining them: so the room is runs of 1, 2 and 4 pages, each
    # allocated and freed once. Pages nobody touches cost no memory.
    alloc, free = exports.get("hugind_alloc"), exports.get("hugind_free")
    if isinstance(alloc, wasmtime.Func) and isinstance(free, wasmtime.Func):
        blocks = [alloc(store, pages * WASM_PAGE - WASM_PAGE // 2) for pages, count in HEAP_ROOM for _ in range(count)]
        for block in blocks:
            if block:
                free(store, block)


def build_snapshot(engine_wasm: bytes) -> bytes:
    # The reset handles are exported only if the engine's code passes the scan
    # (hugind/wasm/snapshot.py): only then may recycle.py keep its instances.
    return snapshot(engine_wasm, _prepare, export_state=True)
