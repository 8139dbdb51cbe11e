"""What recording costs: the same small agent run plain, recorded, and replayed, in one process.

Prints medians and ratios against the plain run measured in the same
process (the machine is shared; only ratios mean something):

* a small agent: N ``fs.exists`` host ops (each one fsync'd when recording),
  N ``Date.now()`` and a few ``Math.random()`` / ``crypto.getRandomValues``;
* ``Date.now()`` per call inside an agent, plain vs recorded, to show what
  the clock interposer costs when it is on, and that a plain run is linked
  without it (its per-call figure is the one ``bench/host_calls.py`` prints).

    python bench/record_overhead.py [--ops 200] [--clock 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hugind.manifest import load_agent
from hugind.pinning import pin
from hugind.replay.observer import Taping
from hugind.replay.reader import read_record
from hugind.replay.scrub import Scrubber
from hugind.replay.tape import Player, Recorder
from hugind.replay.writer import RecordWriter
from hugind.run import RunOptions, run_agent

AGENT_JS = """
export default ({args}) => {
  const ops = Number(args[0]), clocks = Number(args[1]);
  let seen = 0;
  for (let i = 0; i < ops; i++) if (fs.exists("agent.yaml")) seen++;
  let t = 0;
  for (let i = 0; i < clocks; i++) t = Date.now();
  const b = new Uint8Array(16); crypto.getRandomValues(b);
  return {seen, r: Math.random() < 2, t: t > 0};
};
"""
CLOCK_JS = """
export default ({args}) => {
  const n = Number(args[0]);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) Date.now();
  return (performance.now() - t0) * 1000 / n;
};
"""


def _agent(root: Path, js: str) -> Path:
    root.mkdir()
    (root / "main.js").write_text(js)
    (root / "agent.yaml").write_text(
        "name: bench\nentry_point: main.js\npermissions:\n  filesystem:\n    read: [agent.yaml]\n"
    )
    return root


def _quiet(_: bytes) -> None:
    pass


def _run(agent_dir: Path, args: list[str], tape: Recorder | Player | None = None) -> object:
    agent = pin(load_agent(agent_dir)).agent
    observers = [] if tape is None else [Taping(tape)]
    options = RunOptions(args=args, stdout=_quiet, stderr=_quiet, observers=observers)
    return run_agent(agent, options).value


def _recorder(agent_dir: Path, path: Path) -> Recorder:
    pinned = pin(load_agent(agent_dir))
    return Recorder(RecordWriter(path, Scrubber({})), pinned.digest, str(agent_dir))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", type=int, default=200)
    parser.add_argument("--clock", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        small = _agent(base / "small", AGENT_JS)
        clock = _agent(base / "clock", CLOCK_JS)
        args = [str(ns.ops), str(ns.clock)]
        plain, recorded, replayed = [], [], []
        _run(small, args)  # warm the engine and module caches
        for i in range(ns.repeat):
            start = time.perf_counter()
            _run(small, args)
            plain.append(time.perf_counter() - start)
            path = base / f"r{i}.hgrec"
            tape = _recorder(small, path)
            start = time.perf_counter()
            _run(small, args, tape)
            recorded.append(time.perf_counter() - start)
            tape.finish(0)
            record = read_record(path)
            player = Player(record, Scrubber({}), tape.code)
            start = time.perf_counter()
            _run(small, args, player)
            replayed.append(time.perf_counter() - start)
        lines = sum(1 for _ in path.open())
        p, r, q = (statistics.median(s) * 1000 for s in (plain, recorded, replayed))
        print(f"small agent ({ns.ops} fs.exists, {ns.clock} Date.now; record of {lines} lines)")
        print(f"  plain run     {p:8.1f} ms")
        print(f"  recorded run  {r:8.1f} ms   ratio {r / p:5.2f}x")
        print(f"  replayed run  {q:8.1f} ms   ratio {q / p:5.2f}x")
        n = ns.clock * 10
        per_plain = min(float(_run(clock, [str(n)])) for _ in range(3))  # type: ignore[arg-type]
        per_rec = []
        for i in range(3):
            tape = _recorder(clock, base / f"c{i}.hgrec")
            per_rec.append(float(_run(clock, [str(n)], tape)))  # type: ignore[arg-type]
            tape.finish(0)
        print(f"Date.now() per call ({n} calls)")
        print(f"  plain         {per_plain:8.3f} us")
        print(f"  recorded      {min(per_rec):8.3f} us   ratio {min(per_rec) / per_plain:5.1f}x")
        print(json.dumps({"record_ratio": round(r / p, 2), "replay_ratio": round(q / p, 2)}))


if __name__ == "__main__":
    main()
