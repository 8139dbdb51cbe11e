"""The compiled-module cache: reused across processes, never trusted blindly."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hugind.sandbox import engine as eng
from hugind.sandbox.js_engine import engine_path

PROBE = """
import sys
from hugind.sandbox import engine as eng
from hugind.sandbox.js_engine import engine_module
engine_module(eng.EngineConfig())
print(eng.cache_stats.hits, eng.cache_stats.misses)
"""


def _probe(cache_dir) -> tuple[int, int]:
    env = {**os.environ, "HUGIND_CACHE_DIR": str(cache_dir)}
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
    hits, misses = out.stdout.split()
    return int(hits), int(misses)


@pytest.fixture
def cache_dir(tmp_path):
    return tmp_path / "cache"


def _cached_files(cache_dir):
    return list((cache_dir / "modules").glob("*.cwasm"))


def test_second_process_deserializes_instead_of_compiling(cache_dir):
    assert _probe(cache_dir) == (0, 1)
    files = _cached_files(cache_dir)
    assert len(files) == 1
    assert files[0].stat().st_mode & 0o777 == 0o600
    assert (cache_dir / "modules").stat().st_mode & 0o777 == 0o700
    assert _probe(cache_dir) == (1, 0)


def test_group_writable_cache_file_is_not_trusted(cache_dir):
    _probe(cache_dir)
    (cached,) = _cached_files(cache_dir)
    os.chmod(cached, 0o666)
    assert _probe(cache_dir) == (0, 1)


def test_cache_in_a_world_writable_directory_is_not_used(cache_dir):
    _probe(cache_dir)
    os.chmod(cache_dir / "modules", 0o777)
    assert _probe(cache_dir) == (0, 1)


def test_corrupt_cache_file_is_recompiled(cache_dir):
    _probe(cache_dir)
    (cached,) = _cached_files(cache_dir)
    cached.write_bytes(b"\x00not a module" * 10)
    os.chmod(cached, 0o600)
    assert _probe(cache_dir) == (0, 1)
    assert _probe(cache_dir) == (1, 0)


def test_cache_key_separates_engine_configurations(tmp_path, monkeypatch):
    monkeypatch.setenv("HUGIND_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(eng, "_memory_cache", {})  # force the disk path in this process
    wasm = engine_path().read_bytes()
    eng.load_module(wasm, eng.EngineConfig(fuel=True))
    eng.load_module(wasm, eng.EngineConfig(fuel=False))
    assert len(list((tmp_path / "modules").glob("*.cwasm"))) == 2


def test_agents_can_never_reach_the_module_cache_even_if_listed(make_agent, tmp_path, monkeypatch):
    # A root containing the cache is refused before the run (#26), so no agent can
    # read, plant or rename a compiled module, nor the key that signs them.
    from hugind.policy.boundary import BoundaryConflict
    from tests.runtime.helpers import run_captured

    cache = tmp_path / "home-cache"
    monkeypatch.setenv("HUGIND_CACHE_DIR", str(cache))
    (cache / "modules").mkdir(parents=True)
    agent = make_agent(
        {"main.js": "export default function () { return fs.list_dir('.'); }"},
        runtime_fs_mode="read-write",
        permissions={"filesystem": {"read": [str(tmp_path)], "write": [str(tmp_path)]}},
    )
    with pytest.raises(BoundaryConflict) as refused:
        run_captured(agent)
    assert str(cache) in str(refused.value) and "HUGIND_CACHE_DIR" in str(refused.value)
    assert refused.value.exit_code == 2


# --- planted code: every entry carries an HMAC under a per-user key (#26) ----------------

REAL = '(module (func (export "f") (result i32) i32.const 42))'
PLANTED = '(module (func (export "f") (result i32) i32.const 666))'
WORKS = """
import sys, wasmtime
from hugind.sandbox import engine as eng
module = eng.load_module(wasmtime.wat2wasm(sys.argv[1]))
store = wasmtime.Store(eng.get_engine())
store.set_epoch_deadline(1 << 40)
answer = wasmtime.Instance(store, module, []).exports(store)["f"](store)
print(eng.cache_stats.hits, eng.cache_stats.misses, answer)
"""


def _run(cache_dir) -> tuple[int, int, int, str]:
    """(hits, misses, what the cached module's f() returned, stderr) of a fresh process."""
    env = {**os.environ, "HUGIND_CACHE_DIR": str(cache_dir)}
    argv = [sys.executable, "-c", WORKS, REAL]
    out = subprocess.run(argv, capture_output=True, text=True, env=env, check=True)
    hits, misses, answer = out.stdout.split()
    return int(hits), int(misses), int(answer), out.stderr


def _planted_module() -> bytes:
    """A valid compiled module for this very engine configuration, f() returning 666:
    what wasmtime would deserialize and run as native code if the cache trusted its file."""
    import wasmtime

    engine = eng.get_engine(eng.EngineConfig())
    return wasmtime.Module(engine, wasmtime.wat2wasm(PLANTED)).serialize()


def test_a_planted_module_is_not_deserialized(cache_dir):
    assert _run(cache_dir)[:3] == (0, 1, 42)
    assert _run(cache_dir)[:3] == (1, 0, 42)
    (cached,) = _cached_files(cache_dir)
    cached.write_bytes(_planted_module())  # same owner, same mode, same name: only the MAC differs
    os.chmod(cached, 0o600)
    hits, misses, answer, stderr = _run(cache_dir)
    assert (hits, misses, answer) == (0, 1, 42)  # rebuilt from the real module: 666 never ran
    assert stderr.count("fails its integrity check") == 1 and str(cached) in stderr
    assert _run(cache_dir) == (1, 0, 42, "")  # the rebuilt entry is trusted again, silently


def test_a_modified_byte_or_a_swapped_entry_is_refused(cache_dir, tmp_path):
    _run(cache_dir)
    (cached,) = _cached_files(cache_dir)
    good = cached.read_bytes()
    cached.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    hits, misses, answer, stderr = _run(cache_dir)
    assert (hits, misses, answer) == (0, 1, 42) and "integrity check" in stderr
    # Another entry's file and tag under this name: the tag binds the bytes to the name.
    other = cached.with_name("0" * 64 + ".cwasm")
    other.write_bytes(_planted_module())
    cached.with_suffix(".mac").replace(other.with_suffix(".mac"))
    os.replace(other, cached)
    assert _run(cache_dir)[:3] == (0, 1, 42)


def test_the_key_is_private_and_an_unsafe_key_disables_the_cache(cache_dir):
    _run(cache_dir)
    key = cache_dir / "modules.key"
    assert key.stat().st_mode & 0o777 == 0o600 and key.stat().st_size == 32
    os.chmod(key, 0o644)  # readable by others: anyone could sign a module
    assert _run(cache_dir)[:3] == (0, 1, 42)
    assert _run(cache_dir)[:3] == (0, 1, 42)  # never trusted again until the key is private


def test_a_copied_entry_is_checked_in_full_and_kept(cache_dir, tmp_path):
    """Same bytes in a new inode (a backup restored): the stamp no longer matches, every
    byte is hashed again, matches the seal, and the entry is used without a warning."""
    import shutil

    _run(cache_dir)
    (cached,) = _cached_files(cache_dir)
    shutil.copyfile(cached, tmp_path / "copy")
    os.replace(tmp_path / "copy", cached)
    os.chmod(cached, 0o600)
    assert _run(cache_dir) == (1, 0, 42, "")
    assert _run(cache_dir) == (1, 0, 42, "")  # stamped again: the cheap check from now on


def test_the_small_hmac_is_hmac_sha256():
    import hmac

    from hugind.sandbox.cache_seal import small_hmac

    for key in (b"k", b"k" * 32, b"k" * 64, b"k" * 100):
        for msg in (b"", b"abc", b"x" * 1000):
            assert small_hmac(key, msg) == hmac.new(key, msg, "sha256").digest()


def test_an_entry_without_a_seal_is_rebuilt_silently(cache_dir):
    """An entry an older hugind wrote has no seal: never deserialized, rebuilt without a
    warning (nothing was tampered with); a planted one without a seal goes the same way."""
    _run(cache_dir)
    (cached,) = _cached_files(cache_dir)
    cached.with_suffix(".mac").unlink()
    cached.write_bytes(_planted_module())
    os.chmod(cached, 0o600)
    assert _run(cache_dir) == (0, 1, 42, "")
    assert _run(cache_dir) == (1, 0, 42, "")
