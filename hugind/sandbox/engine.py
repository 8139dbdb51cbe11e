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
else could have written it **and** its bytes carry a valid HMAC-SHA256 under
a per-user key (``<cache>/modules.key``, 0600, made on first use). The seal is
kept beside the entry (``.mac``) and binds its bytes to its name, so neither a
planted file nor another module's file under this name is ever run: a
mismatch rebuilds the module with one warning (``cache_seal.py`` says how a
cold start checks it without hashing 7.7 MB). The inode checked is the very
inode then deserialized (one open, ``/proc/self/fd``). No agent ever
has a filesystem view of the cache or the key: a policy root overlapping the
cache dir is refused before the run (``hugind/policy/boundary.py``).
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
from hugind.sandbox import raw_ffi, raw_selftest
from hugind.sandbox.cache_seal import NoSeal, Seal, Unsealed, bytes_mac, cache_key, check_entry, same, stamp_of
from hugind.sha256 import sha256

raw_ffi.SELF_TEST = raw_selftest.run  # the raw host-call path is tested before its first use

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
# Set by the warm server while it loads modules before it forks (hugind/warm/preload.py):
# a process is forked safely only while it has one thread, so the engines it makes start
# no ticker; the first get_engine in each forked child starts it.
hold_ticker = False


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
        if not _ticker_started and not hold_ticker:
            threading.Thread(target=_tick_forever, name="hugind-epoch", daemon=True).start()
            _ticker_started = True
        return engine


def config_of(engine: wasmtime.Engine) -> EngineConfig | None:
    """The configuration ``get_engine`` made ``engine`` for; None for an engine it did not make."""
    with _engines_lock:
        return next((config for config, made in _engines.items() if made is engine), None)


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


def _sealed_deserialize(engine: wasmtime.Engine, path: Path, key: bytes) -> wasmtime.Module | None:
    """The module in ``path`` if hugind sealed it (None: no entry); ``Unsealed`` if the
    entry is not ours; a WasmtimeError if wasmtime refuses bytes we wrote. The file is
    opened once: the inode checked is the inode deserialized (through ``/proc/self/fd``)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError:
        raise Unsealed from None
    try:
        renewed = check_entry(fd, path, key)
        via = f"/proc/self/fd/{fd}"
        if os.path.exists(via):
            module = wasmtime.Module.deserialize_file(engine, via)
        else:  # no /proc: the bytes read through this fd, checked in full again
            with open(fd, "rb", closefd=False) as f:
                data = f.read()
            if not same(
                bytes_mac(key, path.stem, data),
                Seal.decode(path.with_suffix(".mac").read_bytes(), key, path.stem)[0].bytes_mac,
            ):
                raise Unsealed
            module = wasmtime.Module.deserialize(engine, data)
    finally:
        os.close(fd)
    if renewed is not None:
        _write_atomically(path.with_suffix(".mac"), renewed)
    return module


def _store_sealed(path: Path, key: bytes, data: bytes) -> None:
    """Write entry ``path`` and its seal. The seal first, without a stamp: a reader in
    between hashes the bytes in full rather than warn; then, once the entry is in
    place, the seal with the stamp of the inode this process wrote."""
    mac = bytes_mac(key, path.stem, data)
    _write_atomically(path.with_suffix(".mac"), Seal(mac).encode(key, path.stem))
    ino = _write_atomically(path, data)
    try:
        st = os.lstat(path)
    except OSError:
        return
    if ino is not None and st.st_ino == ino:
        _write_atomically(path.with_suffix(".mac"), Seal(mac, stamp_of(st)).encode(key, path.stem))


_warned: set[Path] = set()


def _warn_once(path: Path, message: str) -> None:
    if path not in _warned:
        _warned.add(path)
        sys.stderr.write(f"hugind: warning: {message}\n")


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


class NotCached(Exception):
    """Raised by a ``produce`` that may not build: the module is to come from the cache only
    (the warm server, which must not compile: compiling starts wasmtime's threads)."""


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
    key = cache_key(directory) if directory else None
    path = directory / f"{name}.cwasm" if directory and key else None
    module = None
    if path is not None and key is not None and os.path.lexists(path):
        try:
            module = _sealed_deserialize(engine, path, key)
            if module is not None:
                cache_stats.hits += 1
        except NoSeal:
            pass  # an older hugind's entry: rebuilt and sealed below, silently
        except Unsealed:
            _warn_once(
                path, f"the cached module {path} fails its integrity check (not written by hugind); rebuilding it"
            )
        except wasmtime.WasmtimeError:
            module = None  # stale or corrupt: recompile and overwrite below
            if what:
                _warn_once(path, f"the cached {what} ({path}) is corrupt; rebuilding it")
    if module is None:
        cache_stats.misses += 1
        module = wasmtime.Module(engine, produce())
        if path is not None and key is not None:
            _store_sealed(path, key, module.serialize())
    with _memory_lock:
        _memory_cache[mem_key] = module
    return module


def _write_atomically(path: Path, data: bytes) -> int | None:
    """Write ``path`` whole or not at all; the inode number written, None on failure."""
    import tempfile  # only the first run on a machine writes: the others skip its import

    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            ino = os.fstat(f.fileno()).st_ino
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
        return ino
    except OSError:
        return None  # caching is an optimisation; a read-only home must not fail runs
