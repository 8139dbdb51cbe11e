"""Binary files through ``fs.read_bytes``/``fs.write_bytes`` in a JS agent, against node.

One run measures, for a file of ``--mib`` MiB of random bytes (best of
``--rounds``, each side timing itself inside its program):

* hugind: ``fs.read_bytes(p)`` (a ``number[]``), then ``fs.write_bytes(q, list)``;
* node, the peer: ``Array.from(readFileSync(p))``, then
  ``writeFileSync(q, Uint8Array.from(list))``: the same number[] both ways;

and prints each as ms and hugind's ratio to node. Both write the bytes they
read; the copies are compared with the original.

    python bench/file_bytes.py [--mib 4] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from hugind.manifest import load_agent
from hugind.run import RunOptions, run_agent

HUGIND_AGENT = """
export default () => {
  let t = performance.now();
  const list = fs.read_bytes("data.bin");
  const read = performance.now() - t;
  t = performance.now();
  fs.write_bytes("copy.bin", list);
  return { read, write: performance.now() - t, length: list.length };
};
"""

NODE_PROGRAM = """
import { readFileSync, writeFileSync } from "node:fs";
let t = performance.now();
const list = Array.from(readFileSync("data.bin"));
const read = performance.now() - t;
t = performance.now();
writeFileSync("node-copy.bin", Uint8Array.from(list));
console.log(JSON.stringify({ read, write: performance.now() - t, length: list.length }));
"""

MANIFEST = "name: file-bytes\nentry_point: main.js\npermissions:\n  filesystem:\n    read: ['.']\n    write: ['.']\n"


def hugind_once(root: Path) -> dict:
    sink: list[bytes] = []
    result = run_agent(load_agent(root), RunOptions(stdout=sink.append, stderr=sink.append, host_env={}))
    if not result.has_result:
        raise SystemExit(f"the bench agent gave no result: {b''.join(sink).decode(errors='replace')}")
    return result.value


def node_once(root: Path, node: str) -> dict:
    out = subprocess.run([node, "bench.mjs"], cwd=root, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=4)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node is the peer: install Node.js")
    with tempfile.TemporaryDirectory(prefix="hugind-bench-bytes-") as tmp:
        root = Path(tmp)
        data = os.urandom(int(args.mib * 1024 * 1024))
        (root / "data.bin").write_bytes(data)
        (root / "agent.yaml").write_text(MANIFEST)
        (root / "main.js").write_text(HUGIND_AGENT)
        (root / "bench.mjs").write_text(NODE_PROGRAM)
        rows = {"hugind": [hugind_once(root) for _ in range(args.rounds)]}
        rows["node"] = [node_once(root, node) for _ in range(args.rounds)]
        for copy in ("copy.bin", "node-copy.bin"):
            if (root / copy).read_bytes() != data:
                raise SystemExit(f"{copy} differs from the file read")
    best = {side: {k: min(r[k] for r in runs) for k in ("read", "write")} for side, runs in rows.items()}
    print(f"{args.mib:g} MiB of random bytes as a number[], best of {args.rounds}")
    for step in ("read", "write"):
        h, n = best["hugind"][step], best["node"][step]
        print(f"  {step:5}  hugind {h:8.1f} ms   node {n:8.1f} ms   {h / n:5.2f}x node")
    print(json.dumps(best))
    return 0


if __name__ == "__main__":
    sys.exit(main())
