"""wasmtime engines, the epoch ticker, and the compiled-module cache.

Engines are process-wide, one per configuration (fuel metering changes the
generated code, so it is part of the configuration). Every engine has epoch
interruption on; one daemon thread ticks all of them every ``TICK_SECONDS``,
and each store turns its own wall-clock budget into a tick deadline.

Compiled modules are cached on disk (``Module.serialize``) because Cranelift
costs ~0.5 s for the JS engine while deserializing costs well under 1 ms.
Deserializing runs native code, so the cache is treated as sensitive: it
lives in a directory only the current user can write, files are written
atomically, and a file is used only if its owner and mode still say nobody
else could have written it. Agents never get a filesystem view of it (the
policy denies it explicitly).
"""

from __future__ import annotations

import os
import stat
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import wasmtime

from hugind.paths import cache_root
from hugind.sha256 import sha256

TICK_SECONDS = 0.005


def _wasmtime_version() -> str:
    """What identifies the wasmtime build in cache keys: its native library's
    path, size and mtime. One stat, where importlib.metadata scans sys.path
    (~10 ms on every start); a reinstall or upgrade changes the key."""
    from wasmtime import _ffi

    try:
        st = os.stat(_ffi.filename)
    except (AttributeError, OSError):  # pragma: no cover - a wasmtime-py that moved its library
        return "unknown"
    return f"{_ffi.filename}:{st.st_size}:{st.st_mtime_ns}"


_WASMTIME_VERSION = _wasmtime_version()


@dataclass(frozen=True)
class EngineConfig:
    fuel: bool = False
    max_wasm_stack: int = 2 << 20  # bytes of native stack a guest may use

    def key(self) -> str:
        return f"fuel={int(self.fuel)},stack={self.max_wasm_stack}"


_engines: dict[EngineConfig, wasmtime.Engine] = {}
_engines_lock = threading.Lock()
_ticker_started = False


def get_engine(config: EngineConfig = EngineConfig()) -> wasmtime.Engine:
    global _ticker_started
    with _engines_lock:
        engine = _engines.get(config)
        if engine is None:
            cfg = wasmtime.Config()
            cfg.epoch_interruption = True
            cfg.consume_fuel = config.fuel
            cfg.max_wasm_stack = config.max_wasm_stack
            cfg.cranelift_opt_level = "speed"
            engine = wasmtime.Engine(cfg)
            _engines[config] = engine
        if not _ticker_started:
            threading.Thread(target=_tick_forever, name="hugind-epoch", daemon=True).start()
            _ticker_started = True
        return engine


def _tick_forever() -> None:
    event = threading.Event()
    while not event.wait(TICK_SECONDS):
        with _engines_lock:
            engines = list(_engines.values())
        for engine in engines:
            engine.increment_epoch()


def seconds_to_ticks(seconds: float) -> int:
    return max(1, int(seconds / TICK_SECONDS) + 1)


# ---- module cache ------------------------------------------------------------


def _private_dir(path: Path) -> Path | None:
    """Create ``path`` (mode 0700) or return it if it is already safe; None if unsafe."""
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = path.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        return None
    return path


def _trusted_file(path: Path) -> bool:
    try:
        st = path.lstat()
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0


cache_stats = CacheStats()
_memory_cache: dict[tuple[EngineConfig, str], wasmtime.Module] = {}
_memory_lock = threading.Lock()


def load_module(wasm: bytes, config: EngineConfig = EngineConfig(), *, disk_cache: bool = True) -> wasmtime.Module:
    """Compile ``wasm`` for the engine of ``config``, reusing earlier compilations.

    Order: this process's memory, then the on-disk cache, then Cranelift.
    """
    digest = sha256(wasm).hexdigest()
    return load_derived(digest, lambda: wasm, config, disk_cache=disk_cache)


def load_derived(
    key: str,
    produce: Callable[[], bytes],
    config: EngineConfig = EngineConfig(),
    *,
    disk_cache: bool = True,
    what: str = "",
) -> wasmtime.Module:
    """The module ``produce()`` would return, compiled, cached under ``key``.

    ``key`` must change whenever the bytes ``produce`` returns would (a content
    hash, or the hash of the inputs of a derived module such as a snapshot);
    the wasmtime version and ``config`` are added here. ``what`` names the
    module in the warning printed when its cache file is corrupt (silent if empty).
    """
    mem_key = (config, key)
    with _memory_lock:
        module = _memory_cache.get(mem_key)
    if module is not None:
        cache_stats.hits += 1
        return module
    engine = get_engine(config)
    name = sha256(f"{_WASMTIME_VERSION}|{config.key()}|{key}".encode()).hexdigest()
    directory = _private_dir(cache_root() / "modules") if disk_cache else None
    path = directory / f"{name}.cwasm" if directory else None
    module = None
    if path is not None and _trusted_file(path):
        try:
            module = wasmtime.Module.deserialize_file(engine, str(path))
            cache_stats.hits += 1
        except wasmtime.WasmtimeError:
            module = None  # stale or corrupt: recompile and overwrite below
            if what:
                sys.stderr.write(f"hugind: warning: the cached {what} ({path}) is corrupt; rebuilding it\n")
    if module is None:
        cache_stats.misses += 1
        module = wasmtime.Module(engine, produce())
        if path is not None:
            _write_atomically(path, module.serialize())
    with _memory_lock:
        _memory_cache[mem_key] = module
    return module


def _write_atomically(path: Path, data: bytes) -> None:
    import tempfile  # only the first run on a machine writes: the others skip its import

    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except OSError:
        pass  # caching is an optimisation; a read-only home must not fail runs
