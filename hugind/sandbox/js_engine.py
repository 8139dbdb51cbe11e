"""Where the compiled QuickJS-in-WASM engine lives and how it is loaded.

By default agents run a *snapshot* of the engine (see hugind/sandbox/js_snapshot.py
and runtimes/wasm/ABI.md, "Snapshot start"): the engine after its runtime,
context and prelude were set up once, so an instance starts from a memory
image instead of running that set-up. ``HUGIND_SNAPSHOT=0`` runs the engine as
built.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from functools import lru_cache
from pathlib import Path

import wasmtime

from hugind.errors import EngineError, InvalidModule
from hugind.sandbox import recycle
from hugind.sandbox.engine import EngineConfig, NotCached, load_derived, load_module
from hugind.sha256 import sha256
from hugind.wasm.leb128 import WasmFormatError
from hugind.wasm.snapshot import SnapshotError

ENGINE_FILE = Path(__file__).resolve().parent.parent / "_engine" / "hugind-js.wasm"
BUILD_INFO = ENGINE_FILE.parent / "BUILD_INFO.json"


def engine_path() -> Path:
    override = os.environ.get("HUGIND_JS_ENGINE")
    return Path(override) if override else ENGINE_FILE


def snapshot_enabled() -> bool:
    return os.environ.get("HUGIND_SNAPSHOT", "1").strip().lower() not in ("0", "false", "no", "off")


@lru_cache(maxsize=4)
def _engine_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise EngineError(
            f"the JS engine is not built ({path} is missing). It is compiled during "
            "`pip install -e .`; to build it by hand run `python runtimes/js/build_engine.py`."
        ) from None


def engine_bytes() -> bytes:
    return _engine_bytes(engine_path())


_modules: dict[tuple[Path, EngineConfig, bool], wasmtime.Module] = {}
_modules_lock = threading.Lock()


def engine_module(config: EngineConfig) -> wasmtime.Module:
    """The engine compiled for ``config``: looked up once per process, then a dict hit
    (no hashing of the engine file per run)."""
    path = engine_path()
    snap = snapshot_enabled()
    key = (path, config, snap)
    with _modules_lock:
        module = _modules.get(key)
    if module is None:
        module = _snapshot_module(path, config) if snap else None
        if module is None:
            module = load_module(_engine_bytes(path), config)
        with _modules_lock:
            _modules[key] = module
    return module


def cached_engine_module(config: EngineConfig) -> wasmtime.Module | None:
    """What ``engine_module`` gives when that is the engine's snapshot and this process or the
    module cache holds it; else None, having built and compiled nothing. For the warm
    server (hugind/warm/preload.py), which must stay single-threaded: its children then
    find the module in this process's table, as a second run in one process does."""
    path = engine_path()
    if not snapshot_enabled():
        return None
    key = (path, config, True)
    with _modules_lock:
        module = _modules.get(key)
    if module is None:
        try:
            module = _snapshot_module(path, config, make=False)
        except NotCached:
            return None
        if module is None:
            return None
        with _modules_lock:
            module = _modules.setdefault(key, module)
    return module


def _snapshot_module(path: Path, config: EngineConfig, *, make: bool = True) -> wasmtime.Module | None:
    """The snapshot of the engine at ``path``; None if it cannot be snapshotted
    (the engine then runs as built, and reports its own failure if it is broken).
    ``make=False``: NotCached rather than build it."""
    from hugind.sandbox.js_snapshot import FORMAT, build_snapshot

    def produce() -> bytes:
        if not make:
            raise NotCached
        return build_snapshot(_engine_bytes(path))

    digest = _sha256_of(path)
    try:
        module = load_derived(f"js-snapshot-v{FORMAT}|{digest}", produce, config, what="JS engine snapshot")
    except (SnapshotError, WasmFormatError) as exc:
        if path == ENGINE_FILE:
            # The engine hugind ships must snapshot; say so, but keep running.
            sys.stderr.write(f"hugind: warning: running the JS engine without a snapshot: {exc}\n")
        return None
    # Its instances may be kept from run to run (recycle.py): the snapshot exports
    # its reset handles only when its code cannot write its tables (js_snapshot.py).
    recycle.allow(module)
    return module


@lru_cache(maxsize=4)
def _sha256_of(path: Path) -> str:
    recorded = _recorded_sha256(path)
    return recorded if recorded is not None else sha256(_engine_bytes(path)).hexdigest()


def _recorded_sha256(path: Path) -> str | None:
    """The sha256 build_engine.py wrote next to the engine, if the file is still the one it
    described (same size and mtime); saves hashing 1 MB at every process start."""
    if path != ENGINE_FILE:
        return None
    try:
        info = json.loads(BUILD_INFO.read_text())
        st = path.stat()
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict) or info.get("size") != st.st_size or info.get("mtime_ns") != st.st_mtime_ns:
        return None
    digest = info.get("sha256")
    return digest if isinstance(digest, str) and len(digest) == 64 else None


def engine_sha256() -> str:
    """The sha256 of the engine as built (what artifacts pin), never of its snapshot."""
    return _sha256_of(engine_path())


def check_artifact_engine(expected: str) -> None:
    """QuickJS bytecode only loads into the engine build that wrote it."""
    if expected != engine_sha256():
        raise InvalidModule(
            "this artifact was built for a different JS engine build; rebuild it with `hugind build` "
            f"(artifact engine {expected[:12]}, installed engine {engine_sha256()[:12]})"
        )
