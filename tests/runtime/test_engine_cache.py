"""The compiled-module cache: reused across processes, never trusted blindly."""

from __future__ import annotations

import json
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
    from tests.runtime.helpers import run_captured

    cache = tmp_path / "home-cache"
    monkeypatch.setenv("HUGIND_CACHE_DIR", str(cache))
    (cache / "modules").mkdir(parents=True)
    (cache / "modules" / "x.cwasm").write_bytes(b"native code")
    agent = make_agent(
        {
            "main.js": f"""
            export default function () {{
              const out = [];
              for (const f of [() => fs.read_bytes({json.dumps(str(cache / "modules" / "x.cwasm"))}),
                               () => fs.write_text({json.dumps(str(cache / "modules" / "y.cwasm"))}, "evil")]) {{
                try {{ f(); out.push("allowed"); }} catch (e) {{ out.push(e.name + ": " + e.message); }}
              }}
              return out;
            }}
            """
        },
        runtime_fs_mode="read-write",
        permissions={"filesystem": {"read": [str(tmp_path)], "write": [str(tmp_path)]}},
    )
    value = run_captured(agent).result.value
    assert all(v.startswith("PermissionDenied") and "hugind's own files" in v for v in value), value
    assert not (cache / "modules" / "y.cwasm").exists()
