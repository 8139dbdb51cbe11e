"""Start-up cost of a script agent, against node running the same script.

Prints, in one run:
  * wall and CPU time (user + system) of `hugind run examples/hello -- world` as a
    user runs it (served by a warm server, hugind/warm, after the first run) and
    cold (HUGIND_WARM=0), `node bench/node_hello.mjs world`, `python -c pass` (the
    interpreter's own floor)
    and `python -c "import wasmtime, yaml, dataclasses"` (the three imports no run can
    do without: what a cold run cannot go below), measured in rounds of one of each, so
    that load on a shared machine falls on all alike; then the ratios hugind/node and
    hugind/python, and the same for the three imports alone. The goals are wall time;
    CPU time is printed beside it because on a loaded machine wall time is partly
    waiting for a core (a warm run's CPU is its client's and its child's, which the
    server reports: the run itself is a child of the server);
  * a fresh machine: `hugind run` with an empty cache and home (XDG_CACHE_HOME,
    HUGIND_HOME): the 1st run (compiles the engine and writes its .cwasm), the 2nd
    and the 10th, and what the 1st run left in the cache;
  * in-process: deserializing the cached engine, and instantiating it + running a
    trivial agent (what a long-lived host such as `hugind serve` pays per call);
  * where a `hugind run examples/hello` spends its wall time, by phase (median over
    runs of an instrumented copy of the command): interpreter start, imports up to
    the quick parser, the run's import stack, the run itself, and the exit (from the
    run's return until the parent has reaped the process).

The subprocesses run without PYTHONDONTWRITEBYTECODE: an installed hugind has its
bytecode compiled (pip does it at install), and with that variable set a run of a
source checkout would compile every hugind module from source, every time.

Usage: python bench/startup.py [--repeat N] [--fresh-rounds N]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))
from _timing import median_ms, time_call

REPO = Path(__file__).resolve().parent.parent
HELLO = [sys.executable, "-m", "hugind", "run", str(REPO / "examples/hello"), "--", "world"]
FRESH_RUNS = 10


# This run's own warm servers (hugind/warm): none left from an earlier run or a shell is
# used, and they end a minute after the last run.
WARM_KEY = f"bench-startup-{os.getpid()}"


def _env(**changes: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "HUGIND_CACHE_DIR")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    env.update(HUGIND_WARM_KEY=WARM_KEY, HUGIND_WARM_IDLE="60", HUGIND_WARM_TRACE="1")
    env.update(changes)
    return env


def _once(cmd: list[str], env: dict[str, str]) -> float:
    return _timed(cmd, env)[0]


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds, and the CPU seconds (user + system) the process used: on a loaded
    machine wall time is partly waiting for a core, CPU time is the work itself. A run a
    warm server served was a child of the server: its CPU is the one its trace reports."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, check=True, capture_output=True, env=env, cwd=REPO)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    served = re.search(rb"hugind: warm: the run used ([0-9.]+) ms of CPU", proc.stderr)
    child = float(served.group(1)) / 1000 if served else 0.0
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime) + child


def interleaved(
    commands: dict[str, list[str]], repeat: int, envs: dict[str, dict[str, str]]
) -> tuple[dict[str, float], dict[str, float]]:
    """Median wall and CPU time (ms) of each command, run in rounds of one of each after a
    warm-up. CPU time is the process's own and its children's: a warm run's child is the
    server's, so its CPU is not counted (wall time is the goal)."""
    env = _env()
    for name, cmd in commands.items():
        _once(cmd, envs.get(name, env))  # page cache, bytecode, hugind's module cache, the warm server
    time.sleep(0.5)  # the warm server the first run started finishes its imports
    wall: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, cmd in commands.items():
            w, c = _timed(cmd, envs.get(name, env))
            wall[name].append(w)
            cpu[name].append(c)
    return {n: median_ms(t) for n, t in wall.items()}, {n: median_ms(t) for n, t in cpu.items()}


def fresh_machine(rounds: int) -> tuple[list[float], list[str]]:
    """Median ms of the 1st..10th `hugind run` from an empty cache; the files run 1 wrote."""
    per_run: list[list[float]] = [[] for _ in range(FRESH_RUNS)]
    written: list[str] = []
    for n in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            # a key of its own: the 1st run finds no warm server either, and starts one
            env = _env(
                XDG_CACHE_HOME=str(Path(tmp) / "cache"),
                HUGIND_HOME=str(Path(tmp) / "home"),
                HUGIND_WARM_KEY=f"{WARM_KEY}-fresh-{n}",
            )
            for i in range(FRESH_RUNS):
                per_run[i].append(_once(HELLO, env))
                if i == 0:
                    files = [p for p in Path(tmp).rglob("*") if p.is_file()]
                    written = sorted(f"{p.relative_to(tmp)} ({p.stat().st_size:,} bytes)" for p in files)
    return [statistics.median(times) * 1000 for times in per_run], written


# The `hugind run` of HELLO, with a monotonic timestamp written to stderr at each phase
# boundary (CLOCK_MONOTONIC is the same clock in the parent, so "start" and "exit" are
# measured across the process boundary).
_PHASES = r"""
import os, time
def mark(name):
    os.write(2, f"PHASE {name} {time.monotonic()}\n".encode())
mark("main")
import sys
sys.argv = ["hugind", *sys.argv[1:]]
import hugind.run_command as rc
import hugind.cli_quick
mark("quick_parser")
stack, run = rc.import_run_stack, rc.run_command
def timed_stack():
    stack()
    mark("run_stack")
def timed_run(args):
    code = run(args)
    mark("run")
    return code
rc.import_run_stack, rc.run_command = timed_stack, timed_run
from hugind.entry import main
main()
"""
PHASES = {
    "start": ("spawn", "main"),
    "imports up to the quick parser": ("main", "quick_parser"),
    "the run's import stack": ("quick_parser", "run_stack"),
    "the run": ("run_stack", "run"),
    "exit (run returned -> reaped)": ("run", "reaped"),
}


def phases(repeat: int) -> dict[str, float]:
    """Median ms of each phase of a cold HELLO (see _PHASES)."""
    env = _env(HUGIND_WARM="0")
    samples: dict[str, list[float]] = {name: [] for name in PHASES}
    for _ in range(repeat):
        spawned = time.monotonic()
        proc = subprocess.run([sys.executable, "-c", _PHASES, *HELLO[3:]], capture_output=True, env=env, cwd=REPO)
        marks = {"spawn": spawned, "reaped": time.monotonic()}
        for line in proc.stderr.decode().splitlines():
            if line.startswith("PHASE "):
                _, name, stamp = line.split()
                marks[name] = float(stamp)
        for name, (begin, end) in PHASES.items():
            samples[name].append(marks[end] - marks[begin])
    return {name: median_ms(times) for name, times in samples.items()}


def in_process(repeat: int) -> tuple[float, float]:
    import wasmtime

    from hugind.manifest import load_agent
    from hugind.run import RunOptions, run_agent
    from hugind.sandbox import engine as eng
    from hugind.sandbox.js_engine import engine_module

    config = eng.EngineConfig()
    module = engine_module(config)  # fills the disk cache if needed
    blob = module.serialize()
    engine = eng.get_engine(config)
    deser = median_ms(time_call(lambda: wasmtime.Module.deserialize(engine, blob), repeat))

    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "trivial.js"
        script.write_text("export default (input) => input.args.length;")
        agent = load_agent(script)
        sink: list[bytes] = []
        options = RunOptions(stdout=sink.append, stderr=sink.append, host_env={})
        run_agent(agent, options)
        run = median_ms(time_call(lambda: run_agent(agent, options), repeat))
    return deser, run


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--fresh-rounds", type=int, default=3, help="empty caches to start from (median)")
    ns = parser.parse_args()

    commands = {
        "hugind": HELLO,
        "cold": HELLO,
        "python": [sys.executable, "-c", "pass"],
        "imports": [sys.executable, "-c", "import wasmtime, yaml, dataclasses"],
    }
    node = shutil.which("node")
    if node:
        commands["node"] = [node, str(REPO / "bench/node_hello.mjs"), "world"]
    wall, cpu = interleaved(commands, ns.repeat, {"cold": _env(HUGIND_WARM="0")})
    fresh, written = fresh_machine(ns.fresh_rounds)
    deser_ms, run_ms = in_process(max(ns.repeat * 10, 50))
    by_phase = phases(ns.repeat)

    labels = {
        "hugind": "hugind run examples/hello (warm server)",
        "cold": "the same, HUGIND_WARM=0 (cold)",
        "node": "node bench/node_hello.mjs",
        "python": "python -c pass (floor)",
        "imports": "python -c 'import wasmtime, yaml, dataclasses'",
    }
    print(f"{'median of ' + str(ns.repeat) + ' rounds':48s} {'wall ms':>8s} {'cpu ms':>8s}")
    for name in ("hugind", "cold", "node", "python", "imports"):
        if name in wall:
            print(f"{labels[name]:48s} {wall[name]:8.1f} {cpu[name]:8.1f}")
    ratios = [
        ("hugind", "python", "goal <= 4x"),
        ("cold", "python", ""),
        ("imports", "python", "no cold run goes below this"),
    ]
    if node:
        ratios[1:1] = [("hugind", "node", "goal <= 1.5x")]
        ratios[3:3] = [("cold", "node", "")]
        ratios.append(("imports", "node", ""))
    print(f"{'ratio':48s} {'wall':>8s} {'cpu':>8s}")
    for a, b, note in ratios:
        print(f"  {a}/{b:41s} {wall[a] / wall[b]:7.2f}x {cpu[a] / cpu[b]:7.2f}x  {note}".rstrip())
    print(f"empty cache: 1st run           {fresh[0]:8.1f} ms (median of {ns.fresh_rounds} fresh caches)")
    print(f"empty cache: 2nd run           {fresh[1]:8.1f} ms")
    print(f"empty cache: 10th run          {fresh[FRESH_RUNS - 1]:8.1f} ms")
    print(f"  ratio 2nd/10th               {fresh[1] / fresh[FRESH_RUNS - 1]:8.2f}x")
    for path in written:
        print(f"  1st run wrote {path}")
    print(f"deserialize cached engine      {deser_ms:8.3f} ms")
    print(f"instantiate + run trivial agent{run_ms:8.3f} ms (in-process, full run_agent)")
    print(f"phases of a cold `hugind run examples/hello` (median of {ns.repeat}, instrumented copy):")
    for name, ms in by_phase.items():
        print(f"  {name:36s} {ms:8.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
