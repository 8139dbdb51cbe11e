"""Throughput of `hugind batch` against a shell loop of `hugind run`, in one run.

Prints, for N trivial JS runs (default 200) of the same agent:
  * a bash `for` loop calling `hugind run AGENT -- i` once per item (one process per run);
  * `hugind batch AGENT INPUTS.jsonl` with --concurrency 1 and 2 (the whole command:
    interpreter start, the worker pool, every item, the results file);
  * for the record, the same items in this process through `run_item` on 1 and on 2
    threads (why the pool uses processes: see docs/design.md, "hugind batch");
then items/s of each and its ratio to the loop. The machine is shared: compare the
ratios, measured in the same run, not the absolute times.

Usage: python bench/batch_throughput.py [--items N] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

AGENT_JS = "export default (input) => ({ echoed: input.args });\n"
MANIFEST = "name: trivial\nentry_point: main.js\n"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    return env


def _timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=_env(), cwd=REPO)
    return time.perf_counter() - start


def _shell_loop(agent: Path, items: int) -> float:
    run = f'"{sys.executable}" -m hugind run "{agent}" -- "$i" >/dev/null || exit 1'
    script = f"for i in $(seq 1 {items}); do {run}; done"
    return _timed(["bash", "-c", script])


def _batch(agent: Path, inputs: Path, out: Path, concurrency: int) -> float:
    cmd = [sys.executable, "-m", "hugind", "batch", str(agent), str(inputs), "--out", str(out), "-j", str(concurrency)]
    took = _timed(cmd)
    results = [json.loads(line) for line in out.read_text().splitlines()]
    if len(results) != len(inputs.read_text().splitlines()) or any(r["status"] != "ok" for r in results):
        raise SystemExit("hugind batch did not run every item ok: the measurement is void")
    return took


def _threads(agent: Path, items: int, threads: int) -> float:
    from hugind.batch.item import BatchItem, BatchRunOptions, run_item

    options = BatchRunOptions(host_env={})
    run_item(str(agent), BatchItem("warm", 0, ("0",)), options)  # the engine load, as a worker's first item
    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        done = list(pool.map(lambda i: run_item(str(agent), BatchItem(str(i), i, (str(i),)), options), range(items)))
    took = time.perf_counter() - start
    if any(r.status != "ok" for r in done):
        raise SystemExit("run_item failed: the measurement is void")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each batch variant (median kept)")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hugind-bench-batch-") as tmp:
        agent = Path(tmp, "agent")
        agent.mkdir()
        (agent / "agent.yaml").write_text(MANIFEST)
        (agent / "main.js").write_text(AGENT_JS)
        inputs = Path(tmp, "in.jsonl")
        inputs.write_text("".join(json.dumps({"args": [str(i)]}) + "\n" for i in range(opts.items)))
        out = Path(tmp, "out.jsonl")
        _timed([sys.executable, "-m", "hugind", "run", str(agent)])  # warm the page and module caches

        rows: dict[str, float] = {}
        rows["shell loop of `hugind run`"] = _shell_loop(agent, opts.items)
        for n in (1, 2):
            rows[f"hugind batch -j {n}"] = statistics.median(_batch(agent, inputs, out, n) for _ in range(opts.repeat))
        for n in (1, 2):
            rows[f"in-process run_item, {n} thread{'s' if n > 1 else ''}"] = _threads(agent, opts.items, n)

    loop = rows["shell loop of `hugind run`"]
    print(f"{opts.items} trivial JS runs, {os.cpu_count()} CPUs (shared: compare ratios, not times)")
    print(f"{'':40}{'wall':>10}{'items/s':>10}{'vs loop':>10}")
    for name, took in rows.items():
        print(f"{name:40}{took:>9.2f}s{opts.items / took:>10.1f}{loop / took:>9.1f}x")
    print(f"batch -j 2 vs -j 1: {rows['hugind batch -j 1'] / rows['hugind batch -j 2']:.2f}x")
    threads = rows["in-process run_item, 1 thread"] / rows["in-process run_item, 2 threads"]
    print(f"run_item 2 threads vs 1: {threads:.2f}x")


if __name__ == "__main__":
    main()
