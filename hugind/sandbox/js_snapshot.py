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
FORMAT = 1


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


def build_snapshot(engine_wasm: bytes) -> bytes:
    return snapshot(engine_wasm, _prepare)
