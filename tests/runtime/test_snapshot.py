"""The JS engine's snapshot: what it may and may not carry from one instance
to the next, when it is rebuilt, and what a broken cache file does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hugind.sandbox import engine as eng
from hugind.sandbox import js_engine
from hugind.sandbox.js_engine import ENGINE_FILE, engine_module
from hugind.wasm import binary as wb
from hugind.wasm.snapshot import is_state_export
from tests.conftest import run_cli
from tests.runtime.helpers import run_captured

PROBE = """
import sys
from pathlib import Path
from hugind.manifest import load_agent
from hugind.run import RunOptions, run_agent
from hugind.sandbox import engine as eng
out = []
result = run_agent(load_agent(Path(sys.argv[1])), RunOptions(stdout=out.append, stderr=out.append, host_env={}))
print(eng.cache_stats.hits, eng.cache_stats.misses, result.value)
"""


def _probe(agent: Path, cache: Path, engine: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "HUGIND_CACHE_DIR": str(cache), "HUGIND_SNAPSHOT": "1"}
    if engine is not None:
        env["HUGIND_JS_ENGINE"] = str(engine)
    return subprocess.run(
        [sys.executable, "-c", PROBE, str(agent)], capture_output=True, text=True, env=env, timeout=120
    )


@pytest.fixture
def echo_agent(make_agent):
    source = "export default () => { try { new TextDecoder('bogus'); } catch (e) { return e.message; } };"
    return make_agent({"main.js": source})


def _exports(module) -> set[str]:
    return {e.name for e in module.exports}


def test_agents_start_from_the_snapshot_unless_disabled(monkeypatch):
    config = eng.EngineConfig()
    monkeypatch.setenv("HUGIND_SNAPSHOT", "1")
    snap = engine_module(config)
    monkeypatch.setenv("HUGIND_SNAPSHOT", "0")
    plain = engine_module(config)
    assert "_initialize" in _exports(plain) and "_initialize" not in _exports(snap)
    handles = {name for name in _exports(snap) if is_state_export(name)}
    assert handles == {"__hugind_snapshot_global_0", "__hugind_snapshot_table_0"}  # the reset handles (recycle.py)
    assert (_exports(snap) - handles) | {"_initialize"} == _exports(plain)
    built = wb.memories(wb.parse(ENGINE_FILE.read_bytes()))[0].min
    (memory,) = [e.type for e in snap.exports if e.name == "memory"]
    assert memory.limits.min > built  # the image holds the heap the set-up allocated


@pytest.mark.parametrize("snapshot", ["1", "0"])
def test_math_random_is_not_shared_between_instances(make_agent, monkeypatch, snapshot):
    monkeypatch.setenv("HUGIND_SNAPSHOT", snapshot)
    agent = make_agent({"main.js": "export default () => [Math.random(), Math.random(), Math.random()];"})
    first = run_captured(agent).result.value
    second = run_captured(agent).result.value
    assert all(0 <= x < 1 for x in first + second)
    assert len(set(first)) == 3
    assert first != second


def test_the_per_instance_clock_origin_is_not_the_snapshots(make_agent, monkeypatch):
    monkeypatch.setenv("HUGIND_SNAPSHOT", "1")
    agent = make_agent({"main.js": "export default () => [performance.now(), performance.timeOrigin];"})
    # WASI's monotonic clock starts with each store: the origin is taken at
    # this instance's configure (two runs differ), never the snapshot's.
    (now1, origin1), (now2, origin2) = run_captured(agent).result.value, run_captured(agent).result.value
    assert now1 >= 0 and now2 >= 0
    assert origin1 != origin2


def test_limits_are_per_run_not_baked(make_agent, monkeypatch):
    monkeypatch.setenv("HUGIND_SNAPSHOT", "1")
    bomb = make_agent(
        {
            "main.js": """
            export default () => {
              const parts = [];
              try { for (;;) parts.push("x".repeat(1 << 20) + parts.length); }
              catch (e) { return e.name + ": " + e.message; }
            };
            """
        },
        permissions={"limits": {"memory_mb": 64}},
    )
    value = run_captured(bomb).result.value
    assert "out of memory" in value.lower(), value


def test_build_compiles_on_the_snapshot(make_agent, monkeypatch):
    from hugind.build import compile_graph
    from hugind.manifest import load_agent

    monkeypatch.setenv("HUGIND_SNAPSHOT", "1")
    agent = make_agent(
        {"main.js": "import { x } from './lib.js'; export default () => x;", "lib.js": "export const x = 1;"}
    )
    graph = compile_graph(load_agent(agent))
    assert set(graph.bytecode) == {graph.entry, *[n for n in graph.sources if n != graph.entry]}
    assert all(len(code) > 0 for code in graph.bytecode.values())


def test_snapshot_is_reused_then_rebuilt_when_the_engine_or_prelude_changes(tmp_path, echo_agent):
    cache = tmp_path / "cache"
    first = _probe(echo_agent, cache)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split()[:2] == ["0", "1"]
    assert "encoding is not supported" in first.stdout
    assert _probe(echo_agent, cache).stdout.split()[:2] == ["1", "0"]
    # The prelude is compiled into the engine: an engine whose prelude says
    # something else must get a snapshot of its own, holding that prelude.
    engine = tmp_path / "engine.wasm"
    original = ENGINE_FILE.read_bytes()
    engine.write_bytes(original.replace(b"encoding is not supported", b"encoding is NOT supported"))
    changed = _probe(echo_agent, cache, engine)
    assert changed.returncode == 0, changed.stderr
    assert changed.stdout.split()[:2] == ["0", "1"]
    assert "encoding is NOT supported" in changed.stdout
    assert len(list((cache / "modules").glob("*.cwasm"))) == 2


def test_snapshot_key_changes_with_the_wasmtime_version(tmp_path, monkeypatch):
    monkeypatch.setenv("HUGIND_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("HUGIND_SNAPSHOT", "1")
    monkeypatch.setattr(eng, "_memory_cache", {})
    monkeypatch.setattr(js_engine, "_modules", {})
    engine_module(eng.EngineConfig())
    monkeypatch.setattr(eng, "_WASMTIME_VERSION", "0.0.0-other")
    monkeypatch.setattr(eng, "_memory_cache", {})
    monkeypatch.setattr(js_engine, "_modules", {})
    misses = eng.cache_stats.misses
    engine_module(eng.EngineConfig())
    assert eng.cache_stats.misses == misses + 1
    assert len(list((tmp_path / "modules").glob("*.cwasm"))) == 2


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_corrupt_snapshot_file_is_rebuilt_with_a_warning(tmp_path, echo_agent, damage):
    cache = tmp_path / "cache"
    assert _probe(echo_agent, cache).returncode == 0
    (cached,) = (cache / "modules").glob("*.cwasm")
    data = cached.read_bytes()
    cached.write_bytes(b"\x7fELF not really" * 100 if damage == "garbage" else data[: len(data) // 2])
    os.chmod(cached, 0o600)
    again = _probe(echo_agent, cache)
    assert again.returncode == 0, again.stderr
    assert "warning" in again.stderr and "corrupt" in again.stderr and "Traceback" not in again.stderr
    assert again.stdout.split()[:2] == ["0", "1"] and "encoding is not supported" in again.stdout
    healed = _probe(echo_agent, cache)
    assert healed.stdout.split()[:2] == ["1", "0"] and healed.stderr == ""


def test_an_engine_that_cannot_be_snapshotted_runs_as_built(tmp_path, echo_agent, monkeypatch):
    # A custom section is copied through; an engine whose set-up fails is another
    # matter: its own error must surface at run time, as without snapshots.
    broken = tmp_path / "broken.wasm"
    module = wb.parse(ENGINE_FILE.read_bytes())
    exports = [e for e in wb.exports(module) if e.name != "hugind_js_configure"]
    module.put(wb.EXPORT, wb.encode_exports(exports))
    broken.write_bytes(module.to_bytes())
    env = {"HUGIND_CACHE_DIR": str(tmp_path / "cache"), "HUGIND_JS_ENGINE": str(broken), "HUGIND_SNAPSHOT": "1"}
    out = run_cli("run", str(echo_agent), env=env)
    assert out.code != 0
    assert "does not export 'hugind_js_configure'" in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_recorded_engine_hash_is_trusted_only_for_the_file_it_describes(tmp_path, monkeypatch):
    engine = tmp_path / "hugind-js.wasm"
    engine.write_bytes(b"\0asm\x01\0\0\0")
    info = tmp_path / "BUILD_INFO.json"
    st = engine.stat()
    recorded = "ab" * 32
    info.write_text(json.dumps({"sha256": recorded, "size": st.st_size, "mtime_ns": st.st_mtime_ns}))
    monkeypatch.setattr(js_engine, "ENGINE_FILE", engine)
    monkeypatch.setattr(js_engine, "BUILD_INFO", info)
    assert js_engine._recorded_sha256(engine) == recorded
    os.utime(engine, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert js_engine._recorded_sha256(engine) is None  # touched since: hash it instead
    info.write_text(json.dumps({"sha256": recorded}))  # an older BUILD_INFO without size/mtime
    assert js_engine._recorded_sha256(engine) is None
