"""Start time of a `hugind build` artifact against its source agent, in one run.

The artifact skips reading and compiling sources (bytecode is loaded into the
shared, already-compiled engine). Prints wall time of `hugind run` for both,
and the in-process run_agent time, which isolates hugind's own work from
Python start-up.

Usage: python bench/artifact_start.py [--repeat N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))
from _timing import median_ms, time_call, time_command

REPO = Path(__file__).resolve().parent.parent


def _make_multi_module_agent(root: Path, modules: int) -> None:
    """An agent whose entry imports `modules` helper modules (sources to parse)."""
    lib = root / "lib"
    lib.mkdir(parents=True)
    imports = []
    for i in range(modules):
        body = "\n".join(f"export function f{i}_{j}(x) {{ return x * {j} + {i}; }}" for j in range(60))
        (lib / f"m{i}.js").write_text(body + f"\nexport const total{i} = f{i}_1(1);\n")
        imports.append(f'import {{ total{i} }} from "./lib/m{i}.js";')
    sum_expr = " + ".join(f"total{i}" for i in range(modules))
    (root / "main.js").write_text("\n".join(imports) + f"\nexport default () => {sum_expr};\n")
    (root / "agent.yaml").write_text(textwrap.dedent("name: bench\nentry_point: main.js\n"))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--modules", type=int, default=20)
    ns = parser.parse_args()

    from hugind.manifest import load_agent
    from hugind.run import RunOptions, run_agent

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "agent"
        _make_multi_module_agent(src, ns.modules)
        art = Path(tmp) / "agent.wasm"
        subprocess.run([sys.executable, "-m", "hugind", "build", str(src), "-o", str(art)], check=True)

        rows = []
        for label, target in (("source", src), ("artifact", art)):
            wall = median_ms(time_command([sys.executable, "-m", "hugind", "run", str(target)], ns.repeat))
            agent = load_agent(target)
            sink: list[bytes] = []
            options = RunOptions(stdout=sink.append, stderr=sink.append, host_env={})
            run_agent(agent, options)
            inproc = median_ms(time_call(lambda a=agent, o=options: run_agent(a, o), ns.repeat * 5))
            rows.append((label, wall, inproc))

    print(f"agent with {ns.modules} imported modules; medians")
    for label, wall, inproc in rows:
        print(f"  {label:9s} hugind run {wall:8.1f} ms   in-process run_agent {inproc:7.2f} ms")
    (_, src_wall, src_in), (_, art_wall, art_in) = rows
    print(f"  ratio artifact/source: wall {art_wall / src_wall:.2f}x, in-process {art_in / src_in:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
