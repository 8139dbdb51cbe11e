"""What the warm server builds ahead of its children's runs (hugind/sandbox/ahead.py,
preload.python_links): the host-call forwarder only from the module cache and under its
own text's hash, the snapshot linked as a run links it, in one thread; a child whose
client overrules the server's raw-path verdict links anew."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import pytest
import wasmtime

from hugind.sandbox import ahead, engine, hostcall_fd, instance, raw_export, raw_ffi
from hugind.sha256 import sha256
from hugind.warm import child
from tests.conftest import REPO

# A module the way run_command links a .py agent's: WASI and the hugind imports, a memory.
MODULE_WAT = """(module
  (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32)))
  (import "hugind" "call" (func (param i32 i32) (result i32)))
  (memory (export "memory") 3))
"""


def test_the_forwarder_is_cached_under_the_hash_of_its_text():
    assert "wasi-forwarder:" + sha256(hostcall_fd._FORWARDER_WAT.encode()).hexdigest() == hostcall_fd.FORWARDER_KEY


def test_the_forwarder_comes_from_the_cache_or_not_at_all(tmp_path, monkeypatch):
    """make=False never compiles (the server must stay single-threaded); once a run
    compiled and stored it, a later process finds it in the cache."""
    monkeypatch.setenv("HUGIND_CACHE_DIR", str(tmp_path / "cache"))
    probe = """
import json, os, sys
from hugind.sandbox import ahead, engine, hostcall_fd
engine.hold_ticker = True
made = engine.get_engine(engine.EngineConfig())
if sys.argv[1] == "run":
    hostcall_fd._forwarder_parts(made)  # as a run's first write to stdout does
    loaded = True
else:
    loaded = ahead.forwarder(made)
print(json.dumps({"loaded": loaded, "threads": len(os.listdir("/proc/self/task")),
                  "stats": [engine.cache_stats.hits, engine.cache_stats.misses]}))
"""

    def probe_with(how: str) -> dict:
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        out = subprocess.run([sys.executable, "-c", probe, how], capture_output=True, text=True, env=env, timeout=60)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    assert probe_with("server") == {"loaded": False, "threads": 1, "stats": [0, 1]}
    assert not list((tmp_path / "cache").rglob("*.cwasm"))  # nothing compiled, nothing stored
    assert probe_with("run")["stats"] == [0, 1]  # compiled, and stored
    assert len(list((tmp_path / "cache").rglob("*.cwasm"))) == 1
    assert probe_with("server") == {"loaded": True, "threads": 1, "stats": [1, 0]}


def _forked(client_env: dict[str, str], made: wasmtime.Engine, module: wasmtime.Module) -> tuple[bool, bool]:
    """In a forked child with the client's environment, as the warm server forks one:
    (whether the server's linker is the one a run gets, whether the run still links)."""
    server_linker = instance._linked_for(made, True, False, True)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            os.environ.clear()
            os.environ.update(client_env)
            child._raw_path_verdict()
            linked = instance._linked_for(made, True, False, True)
            linked.pre(module)
            os.write(write, repr((linked is server_linker, raw_ffi.enabled())).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        answer = f.read()
    os.waitpid(pid, 0)
    return ast.literal_eval(answer)


@pytest.fixture
def server_state(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(raw_ffi, "_raw", None)
    monkeypatch.setattr(raw_ffi, "reason", None)
    monkeypatch.setattr(child, "_RAW_CHECKED", False)
    monkeypatch.setattr(child, "_RAW_CHOICE", None)
    monkeypatch.delenv(raw_ffi.ENV, raising=False)
    monkeypatch.setattr(instance, "_linked", type(instance._linked)())  # this test's linkers only
    child.check_raw_path()
    made = engine.get_engine(engine.EngineConfig())
    module = wasmtime.Module(made, MODULE_WAT)
    ahead.link(made, module, inherit_stdin=True, channel=True)
    return made, module


def test_a_child_keeps_the_linker_made_under_the_same_verdict(server_state):
    if not raw_ffi._raw:
        pytest.skip(f"the raw path is off here: {raw_ffi.reason}")
    assert _forked({}, *server_state) == (True, True)


def test_a_child_whose_client_turns_the_raw_path_off_links_anew(server_state):
    assert _forked({raw_ffi.ENV: "0"}, *server_state) == (False, False)


def test_linking_ahead_fills_what_a_run_asks_for(server_state):
    made, module = server_state
    linked = instance._linked_for(made, True, False, True)
    assert module in linked.pres and module in instance._initial_memory and module in raw_export._tables
    assert instance._initial_memory_bytes(module) == 3 * 65536


JS_PROBE = """
import json, os, sys
from hugind.warm import preload
from hugind.sandbox import engine, instance, js_engine
fds = preload.js_agents()
module = js_engine._modules.get((js_engine.engine_path(), engine.EngineConfig(), True))
made = engine._engines.get(engine.EngineConfig())
linked = made is not None and module in instance._linked_for(made, True, False, False).pres
print(json.dumps({"fds": [os.readlink(f"/proc/self/fd/{fd}") for fd in fds], "threads": preload.threads(),
                  "loaded": module is not None, "linked": linked}))
"""


def _js_probe(**env: str) -> dict:
    full = {**os.environ, "PYTHONPATH": str(REPO), **env}
    out = subprocess.run([sys.executable, "-c", JS_PROBE], capture_output=True, text=True, env=full, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_the_js_engine_is_loaded_and_linked_ahead_from_the_cache():
    from hugind.paths import cache_root
    from hugind.sandbox import js_engine

    js_engine.engine_module(engine.EngineConfig())  # its snapshot is in the cache from here on
    got = _js_probe()
    assert (got["threads"], got["loaded"], got["linked"]) == (1, True, True), got
    assert len(got["fds"]) == 1 and got["fds"][0].startswith(str(cache_root() / "modules")), got


def test_the_js_snapshot_is_never_made_ahead(tmp_path):
    got = _js_probe(HUGIND_CACHE_DIR=str(tmp_path / "cache"))
    assert got == {"fds": [], "threads": 1, "loaded": False, "linked": False}
    assert not [p for p in tmp_path.rglob("*.cwasm")]
