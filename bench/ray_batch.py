"""Throughput of ``hugind batch`` on Ray's local mode, against the local worker pool.

Prints, in one run:
  * the cost of starting a local Ray head (``ray.init(num_cpus=2)``) in this process,
    and the memory of its processes (RSS summed over the head's children);
  * for two agents, ``hugind batch AGENT ITEMS -j 2`` run locally and with
    ``--ray ADDRESS`` (the head started above, so the CLI only connects), in
    alternating rounds so that load on a shared machine falls on both alike:
    wall time and items/s (medians), and the ratio Ray/local. ``compute`` returns
    at once (the per-item overhead dominates); ``wait`` sleeps 200 ms per item (an
    agent waiting on an LLM: concurrency dominates).

Usage: python bench/ray_batch.py [--items N] [--rounds N]
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
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

AGENTS = {
    "compute": "export default (input) => input.args[0].split('').reverse().join('');",
    "wait": "export default async (input) => { await new Promise((r) => setTimeout(r, 200)); return input.args[0]; };",
}


def _write_agent(root: Path, name: str, source: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "main.js").write_text(source)
    (folder / "agent.yaml").write_text(f"name: {name}\nentry_point: main.js\n")
    return folder


def _rss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def _descendants(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-eo", "pid=,ppid="], capture_output=True, text=True, check=True).stdout
    children: dict[int, list[int]] = {}
    for line in out.splitlines():
        child, parent = map(int, line.split())
        children.setdefault(parent, []).append(child)
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _batch(agent: Path, inputs: Path, out: Path, extra: list[str]) -> float:
    cmd = [sys.executable, "-m", "hugind", "batch", str(agent), str(inputs), "--out", str(out), "-j", "2", *extra]
    started = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, cwd=REPO)
    elapsed = time.perf_counter() - started
    statuses = {json.loads(line)["status"] for line in out.read_text().splitlines()}
    assert statuses == {"ok"}, statuses
    out.unlink()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    opts = parser.parse_args()
    from hugind.distributed.connect import private_ray_env

    private_ray_env(local=True)  # loopback only, no usage reports (read when Ray is imported)
    import ray

    root = Path(tempfile.mkdtemp(prefix="hugind-bench-ray-"))
    os.environ["HUGIND_RAY_AGENTS_DIR"] = str(root / "unpacked")
    started = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="WARNING")
    init_s = time.perf_counter() - started
    address = ray.get_runtime_context().gcs_address
    print(f"ray.init(num_cpus=2): {init_s:.1f} s; head processes: {_rss_mb(_descendants(os.getpid())):.0f} MB RSS")
    try:
        inputs = root / "in.jsonl"
        inputs.write_text("".join(json.dumps({"args": [f"item-{i}"]}) + "\n" for i in range(opts.items)))
        print(f"{opts.items} items, -j 2, {opts.rounds} rounds (medians)")
        print(f"{'agent':<8} {'local s':>8} {'items/s':>8} {'ray s':>8} {'items/s':>8} {'ray/local':>10}")
        for name, source in AGENTS.items():
            agent = _write_agent(root, name, source)
            out = root / "out.jsonl"
            _batch(agent, inputs, out, ["--ray", address])  # warm: workers import hugind, the pack is unpacked
            local, on_ray = [], []
            for _ in range(opts.rounds):
                local.append(_batch(agent, inputs, out, []))
                on_ray.append(_batch(agent, inputs, out, ["--ray", address]))
            lo, ra = statistics.median(local), statistics.median(on_ray)
            n = opts.items
            print(f"{name:<8} {lo:>8.2f} {n / lo:>8.1f} {ra:>8.2f} {n / ra:>8.1f} {ra / lo:>10.2f}")
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
