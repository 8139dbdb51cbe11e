"""CPU-bound JS under hugind, the native QuickJS-NG wheel and node, in one run.

    python bench/compute.py [--repeat 5]

One program (below) holds five workloads: recursion (fib), JSON
stringify/parse of 20k objects, regex replace/match over 1 MB of text,
sorting 200k numbers, and a markdown render with ``marked`` (bundled with
esbuild from tests/npm_bundles/node_modules, as docs/npm.md tells agent authors
to bundle). A sixth, ``sortcall``, sorts the same numbers with a three-way
comparator: hugind's engine computes ``(x, y) => x - y`` without calling it
(docs/design.md, "Fast paths in the engine"), so the sort is also measured
with a comparator that every engine calls. Each engine runs the same program; it times only the compute,
inside the engine (``performance.now()``), after one warm-up iteration, and
prints per workload the median of ``--repeat`` iterations; with ``--rounds N``
the engines take turns N times and each workload keeps its best round. Start-up, bundle
parsing and input generation are outside the timed region.

Engines: hugind (a .js agent run in process by ``hugind.run.run_agent``, on
the engine in hugind/_engine), the native QuickJS-NG of the ``quickjs-ng``
wheel (``pip install -e '.[bench]'``; same QuickJS-NG version hugind builds)
and node. Each figure is printed with its ratio to native QuickJS-NG measured
in this same run. Each workload returns a checksum, and the three engines must
agree on it, so no engine can skip work.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NPM = ROOT / "tests" / "npm_bundles"
ESBUILD = NPM / "node_modules" / ".bin" / "esbuild"

# The workloads. `MARKED` is the bundled library (an IIFE defining `Marked`),
# spliced in before this text; `REPEAT` is replaced by the repeat count.
PROGRAM = r"""
const now = () => performance.now();
let seed = 12345;
const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296;
const WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
  "iota", "kappa", "lambda", "mu", "foo@example.org", "2024-02-29", "x=42", "HTTP/1.1"];
const word = () => WORDS[Math.floor(rnd() * WORDS.length)];

function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

const objects = [];
for (let i = 0; i < 20000; i++) {
  objects.push({ id: i, name: word() + i, score: rnd() * 1000, tags: [word(), word()],
    nested: { ok: i % 3 === 0, when: "2024-01-" + (i % 28 + 1), ratio: i / 7 } });
}
const textParts = [];
let textLen = 0;
while (textLen < 1 << 20) { const w = word(); textParts.push(w); textLen += w.length + 1; }
const text = textParts.join(" ");
const numbers = [];
for (let i = 0; i < 200000; i++) numbers.push(rnd() * 1e6);
const mdParts = [];
for (let i = 0; i < 40; i++) {
  mdParts.push("## Section " + i + "\n\nSome *emphasis* and **strong** text with `code` and a " +
    "[link](https://x.test/" + i + ").\n\n" +
    "- item " + word() + "\n- item " + word() + "\n  - nested " + word() + "\n\n" +
    "> quoted " + word() + " " + word() + "\n\n```js\nconst v = " + i + ";\n```\n\n" +
    "| a | b |\n|---|---|\n| " + word() + " | " + i + " |\n");
}
const markdown = mdParts.join("\n");

const workloads = {
  fib: () => fib(27),
  json: () => { const s = JSON.stringify(objects); return JSON.parse(s).length + s.length; },
  regex: () => {
    const replaced = text.replace(/([a-z]+)@([a-z]+)\.org/g, "$2 at $1");
    const dates = text.match(/\b\d{4}-\d{2}-\d{2}\b/g).length;
    const words = (text.match(/\b[aeiou]\w*a\b/gi) || []).length;
    return replaced.length + dates * 7 + words;
  },
  sort: () => { const a = numbers.slice(); a.sort((x, y) => x - y); return Math.round(a[1000] + a[100000]); },
  // The same sort with a comparator no engine skips calling: 3.3M-3.8M JS calls from C.
  sortcall: () => {
    const a = numbers.slice();
    a.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    return Math.round(a[1000] + a[100000]);
  },
  markdown: () => Marked.marked.parse(markdown).length,
};

function runAll() {
  const out = {};
  for (const [name, fn] of Object.entries(workloads)) {
    const check = fn();  // warm-up
    const times = [];
    for (let i = 0; i < REPEAT; i++) {
      const t0 = now();
      const c = fn();
      times.push(now() - t0);
      if (c !== check) throw new Error(name + ": checksum changed");
    }
    times.sort((x, y) => x - y);
    out[name] = { ms: times[times.length >> 1], check };
  }
  return JSON.stringify(out);
}
"""


TARGET_WORKLOADS = ("fib", "json", "regex", "sort", "markdown")


def bundle_marked(tmp: Path) -> str:
    if not ESBUILD.exists():
        sys.exit("tests/npm_bundles/node_modules is missing: run `npm ci --prefix tests/npm_bundles`")
    out = tmp / "marked.js"
    # The entry comes on stdin; esbuild resolves it from its cwd, tests/npm_bundles.
    cmd = [str(ESBUILD), f"--sourcefile={NPM / 'entry.js'}", "--bundle", "--format=iife", "--global-name=Marked"]
    cmd.append("--platform=browser")
    entry = 'export { marked } from "marked";\n'
    subprocess.run([*cmd, f"--outfile={out}", "--log-level=warning"], input=entry, text=True, check=True, cwd=NPM)
    return out.read_text()


def program(marked: str, repeat: int) -> str:
    return marked + "\n" + PROGRAM.replace("REPEAT", str(repeat))


def run_native(src: str) -> dict:
    import quickjs

    ctx = quickjs.Context()
    ctx.set_memory_limit(1 << 30)
    ctx.set_max_stack_size(8 << 20)
    return json.loads(ctx.eval(src + "\nrunAll();"))


def run_node(src: str, tmp: Path) -> dict:
    node = shutil.which("node")
    if node is None:
        sys.exit("node is not installed")
    script = tmp / "node_compute.cjs"
    script.write_text(src + "\nconsole.log(runAll());\n")
    proc = subprocess.run([node, str(script)], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_hugind(src: str, tmp: Path, engine: Path | None = None) -> dict:
    import os

    from hugind.manifest import load_agent
    from hugind.run import RunOptions, run_agent

    agent = tmp / "compute.js"
    agent.write_text(src + "\nconsole.log(runAll());\n")
    seen: list[bytes] = []
    errors: list[bytes] = []
    # hugind/sandbox/js_engine.py reads the override at each run: a variant built elsewhere.
    if engine is None:
        os.environ.pop("HUGIND_JS_ENGINE", None)
    else:
        os.environ["HUGIND_JS_ENGINE"] = str(engine)
    run_agent(load_agent(agent), RunOptions(stdout=seen.append, stderr=errors.append, host_env={}))
    lines = b"".join(seen).decode().strip().splitlines()
    if not lines:
        sys.exit("hugind printed nothing: " + b"".join(errors).decode())
    return json.loads(lines[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=1, help="run every engine this many times, alternating")
    parser.add_argument("--only", choices=("hugind", "native", "node"), action="append")
    parser.add_argument(
        "--engine",
        action="append",
        default=[],
        metavar="LABEL=PATH",
        help="also run hugind on this engine build (a variant's hugind-js.wasm), in the same run",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hugind-compute-") as name:
        tmp = Path(name)
        src = program(bundle_marked(tmp), args.repeat)
        engines = args.only or ["native", "hugind", "node"]
        if "native" not in engines:
            engines.insert(0, "native")
        runners = {
            "native": lambda: run_native(src),
            "hugind": lambda: run_hugind(src, tmp),
            "node": lambda: run_node(src, tmp),
        }
        for spec in args.engine:
            label, _, path = spec.partition("=")
            runners[label] = lambda p=Path(path): run_hugind(src, tmp, p)
            engines.append(label)
        # Rounds alternate the engines, so a burst of load from elsewhere on the machine
        # lands on all of them; each workload keeps its best round (least disturbed).
        results: dict[str, dict] = {}
        for _ in range(args.rounds):
            for e in engines:
                got = runners[e]()
                best = results.setdefault(e, got)
                for w, cell in got.items():
                    if cell["ms"] < best[w]["ms"]:
                        best[w] = cell
    base = results["native"]
    print(f"{'workload (median ms, ratio to native QuickJS-NG)':50}")
    print(f"{'':10}" + "".join(f"{e:>22}" for e in engines))
    for w in base:
        checks = {results[e][w]["check"] for e in engines}
        if len(checks) != 1:
            sys.exit(f"{w}: the engines disagree on the checksum: {checks}")
        cells = "".join(f"{results[e][w]['ms']:11.1f} {results[e][w]['ms'] / base[w]['ms']:8.2f}x  " for e in engines)
        print(f"{w:10}{cells}")
    # The summary covers the five workloads the target was set on; `sortcall` is
    # printed above so that the sort's figure is also seen with every call made.
    for e in engines:
        ratios = [results[e][w]["ms"] / base[w]["ms"] for w in TARGET_WORKLOADS]
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"{e:10} geometric mean {geo:.2f}x, worst {max(ratios):.2f}x  ({', '.join(TARGET_WORKLOADS)})")


if __name__ == "__main__":
    main()
