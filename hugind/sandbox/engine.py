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
a per-user key (``<cache>/modules.key``, 0600, made on first use). The tag is
kept beside the entry (``.mac``) and binds its bytes to its name, so neither a
planted file nor another module's file under this name is ever run: a
mismatch rebuilds the module with one warning. The bytes checked are those of
the very inode then deserialized (one open, ``/proc/self/fd``). No agent ever
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


def _trusted_stat(st: os.stat_result) -> bool:
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


KEY_BYTES = 32
MAC_BYTES = 32
_key_cache: dict[Path, bytes] = {}


def cache_key(directory: Path) -> bytes | None:
    """The per-user key of the module cache in ``directory`` (made on first use), or None
    when it cannot be trusted: not ours, readable by others, or the wrong size."""
    path = directory.parent / "modules.key"
    known = _key_cache.get(path)
    if known is not None:
        return known
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        key = os.urandom(KEY_BYTES)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except FileExistsError:  # another process made it meanwhile: read theirs
            return cache_key(directory)
        except OSError:
            return None
        with os.fdopen(fd, "wb") as f:
            f.write(key)
        _key_cache[path] = key
        return key
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        key = f.read(KEY_BYTES + 1)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077 or len(key) != KEY_BYTES:
        return None
    _key_cache[path] = key
    return key


def _mac(key: bytes, name: str, data: bytes | memoryview) -> bytes:
    import hmac  # only a run that reads or writes the disk cache pays for it

    mac = hmac.new(key, name.encode() + b"\0", "sha256")
    mac.update(data)
    return mac.digest()


def _verified_deserialize(engine: wasmtime.Engine, path: Path, key: bytes) -> wasmtime.Module | None:
    """The module in ``path`` if its bytes carry our MAC (None: absent, or not ours; a
    WasmtimeError if wasmtime refuses bytes we wrote). The inode whose bytes were
    checked is the one deserialized: the file is opened once, checked and mapped
    through that fd, so swapping the name meanwhile changes nothing."""
    import hmac
    import mmap

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not _trusted_stat(st) or st.st_size == 0:
            raise _Untrusted
        try:
            tag = path.with_suffix(".mac").read_bytes()
        except OSError:
            raise _Untrusted from None
        with mmap.mmap(fd, 0, prot=mmap.PROT_READ) as view:
            if len(tag) != MAC_BYTES or not hmac.compare_digest(tag, _mac(key, path.stem, view)):
                raise _Untrusted
        via = f"/proc/self/fd/{fd}"
        if os.path.exists(via):
            return wasmtime.Module.deserialize_file(engine, via)
        with open(fd, "rb", closefd=False) as f:  # no /proc: the bytes read here are the ones checked
            data = f.read()
        if not hmac.compare_digest(tag, _mac(key, path.stem, data)):
            raise _Untrusted
        return wasmtime.Module.deserialize(engine, data)
    finally:
        os.close(fd)


class _Untrusted(Exception):
    """A cache entry without a valid MAC: never deserialized."""


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
            module = _verified_deserialize(engine, path, key)
            if module is not None:
                cache_stats.hits += 1
        except _Untrusted:
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
            data = module.serialize()
            # The tag first: a reader in between finds no entry yet (a miss), not a bad one.
            _write_atomically(path.with_suffix(".mac"), _mac(key, path.stem, data))
            _write_atomically(path, data)
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
