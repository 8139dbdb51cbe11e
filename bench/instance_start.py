"""Instance start-up of the JS engine, with and without the snapshot, and the
resident memory of idle JS agents.

Prints, in one run, for three ways to start: the snapshotted engine on an
instance kept from the previous run and reset (the default in a process that
runs the engine more than once: hugind/sandbox/recycle.py), the snapshotted
engine on a fresh instance every run (HUGIND_RECYCLE=0), and (HUGIND_SNAPSHOT=0)
the engine as built:
  * bare: `Linker.instantiate` of the engine module in a fresh store with an
    empty WASI context (the floor any embedder pays);
  * guest: hugind's GuestInstance (store, WASI, host imports, instantiate);
  * session: an AgentSession (what precedes agent code: the guest, plus the
    engine's configure call where it is not fused into the start, see
    runtimes/wasm/ABI.md, "Fused start");
  * run_agent: the full in-process run of a trivial JS agent;
and the ratio of each to the bare instance of the same module; then the
breakdown of one run_agent by phase; then inside one run_agent: each guest
export call (time, host calls included, and the minor page faults it took:
a fresh instance of the copy-on-write snapshot image pays one per page it
touches), the host calls the guest made, and the Python outside any export;
then the resident set per idle agent (N sessions kept alive after run_main,
each in a fresh subprocess).

Usage: python bench/instance_start.py [--repeat N] [--idle N]
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))
from _timing import median_ms, time_call

AGENT_SOURCE = "export default (input) => input.args.length;"


def _trivial_agent(tmp: Path, source: str = AGENT_SOURCE, name: str = "trivial.js"):
    from hugind.manifest import load_agent

    script = tmp / name
    script.write_text(source)
    return load_agent(script)


def _fault_cost(repeat: int, pages: int = 64) -> float:
    """Microseconds one first write to a page of a fresh snapshot instance costs:
    the same writes timed again once the pages are the instance's own give the
    cost of the writes alone, and the difference is the page faults'."""
    import ctypes

    from hugind.host.dispatch import Dispatcher
    from hugind.host.registry import HostContext
    from hugind.sandbox.engine import EngineConfig
    from hugind.sandbox.instance import GuestInstance, GuestIO, GuestLimits
    from hugind.sandbox.js_engine import engine_module

    _set_mode("fresh")
    module = engine_module(EngineConfig())
    dispatcher = Dispatcher(HostContext(policy=None, agent_root=Path("."), deadline=time.monotonic() + 3600), [])
    io = GuestIO(stdout=lambda b: None, stderr=lambda b: None)
    first: list[float] = []
    again: list[float] = []
    for _ in range(repeat):
        guest = GuestInstance(module, dispatcher, io, GuestLimits(), EngineConfig())
        memory = guest.memory
        base = ctypes.addressof(memory.data_ptr(guest.store).contents) + memory.data_len(guest.store) // 4
        for out in (first, again):
            t0 = time.perf_counter()
            for page in range(pages):
                ctypes.memset(base + page * 4096 + 8, 1, 1)
            out.append(time.perf_counter() - t0)
    return (statistics.median(first) - statistics.median(again)) / pages * 1e6


MODES = ("kept", "fresh", "as built")


def _set_mode(mode: str) -> None:
    from hugind.sandbox import recycle

    os.environ["HUGIND_SNAPSHOT"] = "0" if mode == "as built" else "1"
    os.environ["HUGIND_RECYCLE"] = "1" if mode == "kept" else "0"
    recycle.clear()


def measure(mode: str, agent, repeat: int) -> dict[str, float]:
    import wasmtime

    from hugind.run import RunOptions, run_agent
    from hugind.sandbox import engine as eng
    from hugind.sandbox.js_engine import engine_module

    _set_mode(mode)
    config = eng.EngineConfig()
    module = engine_module(config)
    engine = eng.get_engine(config)
    linker = wasmtime.Linker(engine)
    linker.define_wasi()
    linker.define_unknown_imports_as_traps(module)

    def bare() -> None:
        store = wasmtime.Store(engine)
        store.set_wasi(wasmtime.WasiConfig())
        store.set_epoch_deadline(1 << 30)
        linker.instantiate(store, module)

    sink: list[bytes] = []
    options = RunOptions(stdout=sink.append, stderr=sink.append, host_env={})
    run_agent(agent, options)  # warm every cache once
    gc.collect()
    full = median_ms(time_call(lambda: run_agent(agent, options), repeat))
    gc.collect()
    floor = median_ms(time_call(bare, repeat))
    gc.collect()
    phases = _phases(agent, options, repeat)
    gc.collect()
    inside = _inside(agent, options, repeat)
    gc.collect()
    empty = _inside(_trivial_agent(Path(agent.root), "", "empty.js"), options, repeat)
    gc.collect()
    return {
        "empty run_agent": empty["total"],
        "empty js_start": empty.get("export hugind_js_start", empty.get("export hugind_main", 0.0)),
        "empty faults": empty["faults total"],
        "bare": floor,
        "guest": phases["guest"],
        "session": phases["session"],
        "run_agent": full,
        **{f"phase {k}": v for k, v in phases.items() if k not in ("guest", "session")},
        **{f"inside {k}": v for k, v in inside.items()},
    }


def _minflt() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _inside(agent, options, repeat: int) -> dict[str, float]:
    """Where one run_agent's time goes: each guest export call (time and minor page
    faults, host calls included), the host calls the guest makes, and the rest
    (Python set-up and tear-down). Medians of per-run sums; timings in ms."""
    from hugind.run import run_agent
    from hugind.sandbox.instance import GuestInstance

    enter, call_into = GuestInstance.enter, GuestInstance._call_into
    run: dict[str, float] = {}

    def add(key: str, value: float) -> None:
        run[key] = run.get(key, 0.0) + value

    def timed_enter(self, name, *args, budget_s):
        f0, t0 = _minflt(), time.perf_counter()
        try:
            return enter(self, name, *args, budget_s=budget_s)
        finally:
            add(f"export {name}", time.perf_counter() - t0)
            add(f"faults {name}", _minflt() - f0)

    def timed_call_into(self, *args):
        t0 = time.perf_counter()
        try:
            return call_into(self, *args)
        finally:
            add("host calls", time.perf_counter() - t0)
            add("host call count", 1)

    samples: dict[str, list[float]] = {}
    GuestInstance.enter, GuestInstance._call_into = timed_enter, timed_call_into
    try:
        for _ in range(repeat):
            run.clear()
            f0, t0 = _minflt(), time.perf_counter()
            run_agent(agent, options)
            run["total"] = time.perf_counter() - t0
            run["faults total"] = _minflt() - f0
            exports = sum(v for k, v in run.items() if k.startswith("export "))
            run["python"] = run["total"] - exports
            for key, value in run.items():
                samples.setdefault(key, []).append(value)
    finally:
        GuestInstance.enter, GuestInstance._call_into = enter, call_into
    out = {}
    for key, values in samples.items():
        counted = key.startswith("faults") or key == "host call count"
        out[key] = statistics.median(values) if counted else median_ms(values)
    return out


def _phases(agent, options, repeat: int) -> dict[str, float]:
    """One run_agent cut into its phases (each timed separately, medians)."""
    import time

    from hugind.run import make_policy, open_session, resolve_env
    from hugind.sandbox.engine import EngineConfig
    from hugind.sandbox.instance import GuestInstance
    from hugind.sandbox.js_engine import engine_module

    samples: dict[str, list[float]] = {k: [] for k in ("policy", "guest", "session", "run_main", "close")}
    for _ in range(repeat):
        t0 = time.perf_counter()
        env = resolve_env(agent.manifest.env, {})
        policy = make_policy(agent, options)
        t1 = time.perf_counter()
        session = open_session(agent, options, policy, env, {})
        t2 = time.perf_counter()
        session.run_main()
        t3 = time.perf_counter()
        session.close()
        policy.close()
        policy.audit.close()
        t4 = time.perf_counter()
        samples["policy"].append(t1 - t0)
        samples["session"].append(t2 - t1)
        samples["run_main"].append(t3 - t2)
        samples["close"].append(t4 - t3)
        # the guest alone, with the session's own dispatcher and limits
        c = session.config
        t5 = time.perf_counter()
        guest = GuestInstance(engine_module(EngineConfig()), session.dispatcher, c.io, c.limits, EngineConfig())
        samples["guest"].append(time.perf_counter() - t5)
        guest.release()  # outside the timings; a kept instance goes back for the next session
        del guest, session
    return {k: median_ms(v) for k, v in samples.items()}


IDLE_PROBE = """
import gc, os, sys, tempfile
from pathlib import Path
sys.path.insert(0, {bench!r})
from instance_start import _trivial_agent
from hugind.run import RunOptions, make_policy, open_session, resolve_env

def memory_kib():
    fields = {{}}
    for line in open("/proc/self/smaps_rollup"):
        parts = line.split()
        if len(parts) == 3 and parts[2] == "kB":
            fields[parts[0].rstrip(":")] = int(parts[1])
    return fields["Rss"], fields["Pss"]

n = int(sys.argv[1])
agent = _trivial_agent(Path(tempfile.mkdtemp()))
sink = []
options = RunOptions(stdout=sink.append, stderr=sink.append, host_env={{}})
def one():
    policy = make_policy(agent, options)
    session = open_session(agent, options, policy, {{}}, {{}})
    session.run_main()
    return session, policy
keep = [one() for _ in range(5)]  # warm: module loaded, code mapped, allocator grown once
gc.collect()
rss0, pss0 = memory_kib()
keep += [one() for _ in range(n)]
gc.collect()
rss1, pss1 = memory_kib()
print(rss0, pss0, rss1, pss1)
"""


def idle_memory(on: bool, n: int) -> tuple[float, float, float]:
    """(RSS MiB per idle agent, PSS MiB per idle agent, process RSS MiB) with ``n`` sessions alive.

    RSS counts a copy-on-write page of the snapshot image once per instance
    that maps it; PSS divides it among them (the memory actually used)."""
    bench = str(Path(__file__).resolve().parent)
    env = {**os.environ, "HUGIND_SNAPSHOT": "1" if on else "0"}
    out = subprocess.run(
        [sys.executable, "-c", IDLE_PROBE.format(bench=bench), str(n)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    rss0, pss0, rss1, pss1 = map(int, out.stdout.split())
    return (rss1 - rss0) / 1024 / n, (pss1 - pss0) / 1024 / n, rss1 / 1024


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--idle", type=int, default=500)
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        agent = _trivial_agent(Path(tmp))
        # Each mode twice, in turns, the better of the two kept: machine noise hits all alike.
        results = {mode: measure(mode, agent, ns.repeat) for mode in MODES}
        for mode in MODES:
            again = measure(mode, agent, ns.repeat)
            results[mode] = {k: min(v, again[k]) for k, v in results[mode].items()}
    kept, fresh, plain = (results[mode] for mode in MODES)
    print(f"median of {ns.repeat}, in process; ratios against the bare instance of the same module")
    print("  kept: the snapshot, on an instance kept from the last run and reset (recycle.py)")
    print("  fresh: the snapshot, a new instance every run (HUGIND_RECYCLE=0)")
    print(f"{'':34}{'kept':>12}{'fresh':>12}{'as built':>12}{'fresh/kept':>12}")
    for key in ("bare", "guest", "session", "run_agent"):
        print(f"{key:34}{kept[key]:10.3f}ms{fresh[key]:10.3f}ms{plain[key]:10.3f}ms{fresh[key] / kept[key]:11.2f}x")
    for key in ("guest", "session", "run_agent", "empty run_agent"):
        ratios = "".join(f"{r[key] / r['bare']:11.2f}x " for r in (kept, fresh, plain))
        print(f"  {key + ' / bare':32}{ratios}")
    for label, snap in (("kept", kept), ("fresh", fresh)):
        _print_breakdown(label, snap)
    cost = _fault_cost(ns.repeat)
    print(f"one page fault, fresh instance    {cost:10.1f}us  (first write to a page, 64 pages)")
    if ns.idle:
        for on in (True, False):
            rss, pss, total = idle_memory(on, ns.idle)
            label = "snapshot" if on else "as built"
            print(
                f"idle JS agents ({label}): RSS {rss:5.2f} MiB each, PSS {pss:5.2f} MiB each; "
                f"process RSS {total:6.1f} MiB with {ns.idle + 5} alive"
            )
    return 0


def _print_breakdown(label: str, snap: dict[str, float]) -> None:
    print(f"run_agent by phase ({label}), share of the phases' sum:")
    phases = {k.removeprefix("phase "): v for k, v in snap.items() if k.startswith("phase ")}
    phases["session"] = snap["session"]
    total = sum(phases.values())
    for key, value in phases.items():
        print(f"  {key:32}{value:10.3f}ms {100 * value / total:5.1f}%")
    print(f"  {'(of session: the guest alone)':32}{snap['guest']:10.3f}ms")
    print(f"inside one run_agent ({label}; medians of per-run sums, export times include their host calls):")
    inside = {k.removeprefix("inside "): v for k, v in snap.items() if k.startswith("inside ")}
    for key, value in inside.items():
        if key.startswith("export "):
            name = key.removeprefix("export ")
            faults = inside.get(f"faults {name}", 0)
            print(f"  {'export ' + name:32}{value:10.3f}ms  {faults:5.0f} minor faults")
    print(
        f"  {'host calls made by the guest':32}{inside['host calls']:10.3f}ms  ({inside['host call count']:.0f} calls)"
    )
    print(f"  {'python (outside any export)':32}{inside['python']:10.3f}ms")
    print(f"  {'run_agent, timed here':32}{inside['total']:10.3f}ms  {inside['faults total']:5.0f} minor faults")
    print(
        f"  {'run_agent of an empty module':32}{snap['empty run_agent']:10.3f}ms"
        f"  {snap['empty faults']:5.0f} minor faults"
        f"  (its hugind_js_start {snap['empty js_start']:.3f}ms; {snap['empty run_agent'] / snap['bare']:.2f}x bare)"
    )


if __name__ == "__main__":
    sys.exit(main())
