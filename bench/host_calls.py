"""Cost of a host call from a JS agent, against floors measured in the same run.

Prints, in one run (ratios only mean something within one run: the machine is shared):

* the floor: a bare wasm -> Python -> wasm call (a WAT loop calling a Python
  import, through ``wasmtime.wat2wasm``), per call;
* from a JS agent (a loop timed with ``performance.now()``): ``fs.cwd()``,
  ``fs.exists("agent.yaml")`` under a read root, and ``Date.now()``, per call,
  with their ratio to the floor;
* two async no-ops in ``Promise.all`` batches of 8 (best of 3 runs):
  ``setTimeout(0)`` (a timer: the dispatcher keeps its wait, no thread) and a
  fetch the policy refuses (the worker-thread path of ``run_command`` and
  ``fetch``, with no I/O), against their peer, the same batches of no-ops
  handed to a pool of 8 Python threads and back, and the floor;
* 1,000 ``run_command("true")`` from a JS agent (``Promise.all`` in batches of
  8) against 1,000 ``subprocess.run(["true"])`` from plain Python, with the
  confinement the run really uses (through the run's zygote), again with a
  sandbox per command (``HUGIND_ZYGOTE=0``), both with bubblewrap and with
  hugind's launcher, and with every layer disabled (``HUGIND_CONFINE_DISABLE``),
  so dispatch overhead shows apart from confinement cost; and ``"true;"``, a
  string that needs ``/bin/sh`` (a plain ``true`` runs without it, see
  ``policy/plain_command.py``), against ``subprocess.run("true;", shell=True)``;
* instantiating the JS engine for a trivial agent, in process.

It uses only public APIs, so the same file measures another checkout: run it
from that checkout's directory (``cd /work/main && python .../host_calls.py``)
and it imports the ``hugind`` found there.

    python bench/host_calls.py [--calls 20000] [--commands 1000] [--skip-commands]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

# The hugind of the current directory when it has one (measuring another
# checkout), else the one this file belongs to.
_HERE = Path.cwd() if (Path.cwd() / "hugind" / "__init__.py").is_file() else Path(__file__).resolve().parent.parent
sys.path.insert(0, str(_HERE))

import wasmtime  # noqa: E402

import hugind  # noqa: E402
from hugind.manifest import load_agent  # noqa: E402
from hugind.run import RunOptions, run_agent  # noqa: E402

CONFINE_OFF = "bwrap,namespaces,landlock,cgroup"
DISABLE_ENV = "HUGIND_CONFINE_DISABLE"
ZYGOTE_ENV = "HUGIND_ZYGOTE"

FLOOR_WAT = """
(module
  (import "bench" "f" (func $f (param i32 i32) (result i32)))
  (func (export "run") (param $n i32) (result i32)
    (local $acc i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $acc (i32.add (local.get $acc) (call $f (local.get $n) (i32.const 7))))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $acc)))
"""

MANIFEST = """\
name: bench-host-calls
entry_point: main.js
mode: script
runtime_fs_mode: read-only
permissions:
  filesystem:
    read: [.]
  shell:
    allow: true
    whitelist: ["true"]
    timeout: 30
  limits:
    timeout: 600
"""

CALLS_JS = """\
// The best of 5 rounds: the machine is shared, and noise only ever adds time.
function per(n, fn) {
  fn(); // warm
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) fn();
    best = Math.min(best, ((performance.now() - t0) * 1000) / n); // microseconds per call
  }
  return best;
}
export default (input) => {
  const n = Number(input.args[0]);
  return {
    cwd: per(n, () => fs.cwd()),
    exists: per(n, () => fs.exists("agent.yaml")),
    date: per(n, () => Date.now()),
  };
};
"""

COMMANDS_JS = """\
export default async (input) => {
  const n = Number(input.args[0]);
  const command = input.args[1];
  await run_command(command);
  const t0 = performance.now();
  for (let done = 0; done < n; done += 8) {
    const batch = [];
    for (let k = 0; k < 8 && done + k < n; k++) batch.push(run_command(command));
    await Promise.all(batch);
  }
  return (performance.now() - t0) / 1000; // seconds
};
"""

TIMERS_JS = """\
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
export default async (input) => {
  const n = Number(input.args[0]);
  await tick();
  const t0 = performance.now();
  for (let done = 0; done < n; done += 8) {
    const batch = [];
    for (let k = 0; k < 8 && done + k < n; k++) batch.push(tick());
    await Promise.all(batch);
  }
  return ((performance.now() - t0) * 1000) / n; // microseconds per async op
};
"""

# An async op that takes the worker path and does no I/O: a fetch the policy
# refuses (the bench agent has no network), answered by a worker thread.
REFUSED_JS = """\
const refused = () => http_get_async("http://127.0.0.1:9/").then(() => 1, () => 0);
export default async (input) => {
  const n = Number(input.args[0]);
  await refused();
  const t0 = performance.now();
  for (let done = 0; done < n; done += 8) {
    const batch = [];
    for (let k = 0; k < 8 && done + k < n; k++) batch.push(refused());
    await Promise.all(batch);
  }
  return ((performance.now() - t0) * 1000) / n; // microseconds per async op
};
"""

TRIVIAL_JS = "export default (input) => input.args.length;\n"


def floor_us(calls: int, rounds: int = 5) -> float:
    """Per-call microseconds of a bare wasm -> Python -> wasm call (best of ``rounds``)."""
    config = wasmtime.Config()
    config.epoch_interruption = True  # as hugind's engines: the loop checks the epoch
    engine = wasmtime.Engine(config)
    store = wasmtime.Store(engine)
    store.set_epoch_deadline(1 << 40)
    module = wasmtime.Module(engine, wasmtime.wat2wasm(FLOOR_WAT))
    i32 = wasmtime.ValType.i32()
    func = wasmtime.Func(store, wasmtime.FuncType([i32, i32], [i32]), lambda a, b: a ^ b)
    run = wasmtime.Instance(store, module, [func]).exports(store)["run"]
    assert isinstance(run, wasmtime.Func)
    run(store, 1000)
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        run(store, calls)
        samples.append((time.perf_counter() - start) / calls * 1e6)
    return min(samples)


def handoff_us(n: int, rounds: int = 3) -> float:
    """Per-op microseconds of a no-op handed to a pool of 8 Python threads and back,
    in batches of 8 (best of ``rounds``): the thread handoff an async op cannot avoid."""
    from concurrent.futures import ThreadPoolExecutor, wait

    samples = []
    with ThreadPoolExecutor(8) as pool:
        wait([pool.submit(int) for _ in range(8)])
        for _ in range(rounds):
            start = time.perf_counter()
            for done in range(0, n, 8):
                wait([pool.submit(int) for _ in range(min(8, n - done))])
            samples.append((time.perf_counter() - start) / n * 1e6)
    return min(samples)


def make_agent(root: Path, source: str) -> Path:
    root.mkdir()
    (root / "agent.yaml").write_text(MANIFEST)
    (root / "main.js").write_text(source)
    return root


def run_js(root: Path, *args: str) -> object:
    sink: list[bytes] = []
    options = RunOptions(args=list(args), stdout=sink.append, stderr=sink.append, host_env={})
    result = run_agent(load_agent(root), options)
    if not result.has_result:
        raise SystemExit(f"the bench agent gave no result: {b''.join(sink).decode(errors='replace')}")
    return result.value


def python_commands(n: int, command: str = "true") -> float:
    """``subprocess.run(["true"])``, or through ``sh -c`` for a command that needs a shell."""
    args: str | list[str] = ["true"] if command == "true" else command
    subprocess.run(args, check=True, shell=command != "true")
    start = time.perf_counter()
    for _ in range(n):
        subprocess.run(args, check=True, shell=command != "true")
    return time.perf_counter() - start


@contextmanager
def confinement(disable: str | None) -> Iterator[None]:
    """Children confined as runs are (None), or with the listed layers disabled."""
    saved = os.environ.pop(DISABLE_ENV, None)
    if disable is not None:
        os.environ[DISABLE_ENV] = disable
    try:
        yield
    finally:
        os.environ.pop(DISABLE_ENV, None)
        if saved is not None:
            os.environ[DISABLE_ENV] = saved


@contextmanager
def zygotes(on: bool) -> Iterator[None]:
    """Commands through the run's zygote (as runs are) or, off, a confined launch each."""
    saved = os.environ.pop(ZYGOTE_ENV, None)
    if not on:
        os.environ[ZYGOTE_ENV] = "0"
    try:
        yield
    finally:
        os.environ.pop(ZYGOTE_ENV, None)
        if saved is not None:
            os.environ[ZYGOTE_ENV] = saved


@dataclass
class CommandRow:
    hugind_s: float  # best of the rounds
    python_s: float
    cpu_s: float  # hugind's process CPU (all its threads) for the run with the best time
    switches: int  # its voluntary context switches in that run (thread wake-ups, mostly)


def commands(root: Path, n: int, rounds: int = 3, command: str = "true") -> CommandRow:
    """hugind and plain Python for ``n`` commands, each the best of ``rounds`` taken in turns:
    the machine is shared, and a burst of load must not land on one side only. hugind's CPU
    and context switches come with its time: they show the work apart from the load."""
    runs, python_s = [], []
    for _ in range(rounds):
        before = resource.getrusage(resource.RUSAGE_SELF)
        seconds = float(run_js(root, str(n), command))  # type: ignore[arg-type]
        after = resource.getrusage(resource.RUSAGE_SELF)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        runs.append((seconds, cpu, after.ru_nvcsw - before.ru_nvcsw))
        python_s.append(python_commands(n, command))
    best = min(runs)
    return CommandRow(best[0], min(python_s), best[1], best[2])


def launch_cost(root: Path, n: int) -> tuple[float, float, list[str]]:
    """(seconds for n sequential, seconds for n in threads of 8) of the very argv a run
    starts for ``true`` (confinement included), with no hugind in between; and that argv."""
    from concurrent.futures import ThreadPoolExecutor

    from hugind.confine.gate import prepare
    from hugind.run import make_policy

    engine = make_policy(load_agent(root), RunOptions())
    plan = engine.check_shell("true")
    launch = prepare(engine, plan.argv, str(plan.cwd), engine.shell_env(), capability="shell", request={"op": "run"})

    def once(_: int = 0) -> None:
        subprocess.run(launch.argv, cwd=str(plan.cwd), env=launch.env, capture_output=True, start_new_session=True)

    try:
        once()
        start = time.perf_counter()
        for _ in range(n):
            once()
        sequential = time.perf_counter() - start
        start = time.perf_counter()
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(once, range(n)))
        threaded = time.perf_counter() - start
    finally:
        launch.release()
        engine.close()
    return sequential, threaded, launch.argv


def instantiate_ms(root: Path, repeat: int) -> tuple[float, float]:
    """(median ms of a whole in-process run of a trivial agent, median ms of GuestInstance alone)."""
    from hugind.host.dispatch import Dispatcher
    from hugind.host.registry import HostContext
    from hugind.sandbox.engine import EngineConfig
    from hugind.sandbox.instance import GuestInstance, GuestIO, GuestLimits
    from hugind.sandbox.js_engine import engine_module

    run_js(root, "x")
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        run_js(root, "x")
        runs.append(time.perf_counter() - start)
    config = EngineConfig()
    module = engine_module(config)
    dispatcher = Dispatcher(HostContext(policy=None, agent_root=root), [])
    io = GuestIO(stdout=lambda b: None, stderr=lambda b: None)
    limits = GuestLimits()
    GuestInstance(module, dispatcher, io, limits, config)
    inst = []
    for _ in range(repeat):
        start = time.perf_counter()
        GuestInstance(module, dispatcher, io, limits, config)
        inst.append(time.perf_counter() - start)
    return statistics.median(runs) * 1000, statistics.median(inst) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20000, help="host calls per JS loop (best of 5 loops)")
    parser.add_argument("--commands", type=int, default=1000, help="run_command calls")
    parser.add_argument("--repeat", type=int, default=30, help="instantiations timed")
    parser.add_argument("--skip-commands", action="store_true")
    ns = parser.parse_args(argv)

    print(f"hugind from {Path(hugind.__file__).resolve().parent.parent}")
    with tempfile.TemporaryDirectory(prefix="hugind-bench-") as tmp:
        calls_agent = make_agent(Path(tmp) / "calls", CALLS_JS)
        floor = floor_us(ns.calls)
        js = run_js(calls_agent, str(ns.calls))
        assert isinstance(js, dict)
        floor_after = floor_us(ns.calls)
        floor = min(floor, floor_after)
        print(f"\nsync host calls ({ns.calls} per loop; floor = bare wasm -> Python -> wasm call)")
        print(f"  floor                  {floor:8.2f} us/call")
        for name, label in (("cwd", "fs.cwd()"), ("exists", 'fs.exists("agent.yaml")'), ("date", "Date.now()")):
            print(f"  {label:<22} {js[name]:8.2f} us/call  {js[name] / floor:6.2f}x floor")

        timers_agent = make_agent(Path(tmp) / "timers", TIMERS_JS)
        per_op = min(float(run_js(timers_agent, str(ns.commands))) for _ in range(3))  # type: ignore[arg-type]
        refused_agent = make_agent(Path(tmp) / "refused", REFUSED_JS)
        worker_op = min(float(run_js(refused_agent, str(ns.commands))) for _ in range(3))  # type: ignore[arg-type]
        handoff = handoff_us(ns.commands)
        print("\nasync no-ops in Promise.all batches of 8 (submit -> ... -> completion -> guest), best of 3")
        print(f"  Python thread pool     {handoff:8.2f} us/op  (no-op to 8 threads and back, no guest)")
        for label, value in (("setTimeout 0 (timer)", per_op), ("refused fetch (worker)", worker_op)):
            ratios = f"{value / handoff:6.2f}x pool  {value / floor:6.2f}x floor"
            print(f"  {label:<22} {value:8.2f} us/op  {ratios}")

        if not ns.skip_commands:
            cmd_agent = make_agent(Path(tmp) / "commands", COMMANDS_JS)
            print(
                f"\n{ns.commands} run_command('true'), Promise.all in batches of 8, vs subprocess.run(['true'])"
                " (best of 3 each, in turns)"
            )
            rows = (
                ("confined, zygote (as runs are)", None, True, "true"),
                # A command string that needs the shell: /bin/sh runs in hugind as in Python's peer.
                ("the same with 'true;' (needs sh) vs subprocess.run('true;', shell=True)", None, True, "true;"),
                (f"confined, {ZYGOTE_ENV}=0 (a sandbox per command)", None, False, "true"),
                ("launcher (HUGIND_CONFINE_DISABLE=bwrap), zygote", "bwrap", True, "true"),
                (f"launcher, {ZYGOTE_ENV}=0", "bwrap", False, "true"),
                (f"{DISABLE_ENV}={CONFINE_OFF}", CONFINE_OFF, False, "true"),
            )
            for label, disable, zygote, command in rows:
                with confinement(disable), zygotes(zygote):
                    row = commands(cmd_agent, ns.commands, command=command)
                    launch = None if zygote else launch_cost(cmd_agent, ns.commands)
                h, p = row.hugind_s, row.python_s
                per = 1000 / ns.commands
                print(
                    f"  {label}: hugind {h:6.2f} s ({h * per:6.2f} ms/cmd), "
                    f"python {p:6.2f} s ({p * per:6.2f} ms/cmd), ratio {h / p:5.2f}x"
                )
                print(
                    f"    hugind's process: {row.cpu_s * per:6.3f} ms CPU/cmd, "
                    f"{row.switches / ns.commands:5.1f} voluntary context switches/cmd"
                )
                if launch is not None:
                    seq, par, argv = launch
                    print(
                        f"    its launch alone ({os.path.basename(argv[0])} ... true, no hugind): "
                        f"{seq * per:6.2f} ms/cmd one at a time, {par * per:6.2f} ms/cmd 8 at a time; "
                        f"hugind / launch 8 at a time {h / par:5.2f}x"
                    )

        trivial = make_agent(Path(tmp) / "trivial", TRIVIAL_JS)
        run_ms, inst_ms = instantiate_ms(trivial, ns.repeat)
        print(f"\nin-process start of a trivial JS agent (median of {ns.repeat})")
        print(f"  GuestInstance(...) alone   {inst_ms:7.3f} ms")
        print(f"  whole run_agent(...)       {run_ms:7.3f} ms")
    summary = {"floor_us": floor, **{f"{k}_us": v for k, v in js.items()}}
    summary.update(async_op_us=per_op, worker_op_us=worker_op, pool_op_us=handoff)
    print("\n" + json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
