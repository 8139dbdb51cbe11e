"""Start-up cost of a script agent, against node running the same script.

Prints, in one run:
  * wall time of `hugind run examples/hello -- world` vs `node bench/node_hello.mjs world`;
  * in-process: deserializing the cached engine, and instantiating it + running a
    trivial agent (what a long-lived host such as `hugind serve` pays per call).

Usage: python bench/startup.py [--repeat N]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))
from _timing import median_ms, time_call, time_command

REPO = Path(__file__).resolve().parent.parent


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
    ns = parser.parse_args()

    hugind_cmd = [sys.executable, "-m", "hugind", "run", str(REPO / "examples/hello"), "--", "world"]
    hugind_ms = median_ms(time_command(hugind_cmd, ns.repeat))
    node = shutil.which("node")
    node_ms = median_ms(time_command([node, str(REPO / "bench/node_hello.mjs"), "world"], ns.repeat)) if node else None
    python_ms = median_ms(time_command([sys.executable, "-c", "pass"], ns.repeat))
    deser_ms, run_ms = in_process(max(ns.repeat * 10, 50))

    print(f"hugind run examples/hello      {hugind_ms:8.1f} ms (median of {ns.repeat})")
    if node_ms:
        print(f"node bench/node_hello.mjs      {node_ms:8.1f} ms")
        print(f"  ratio hugind/node            {hugind_ms / node_ms:8.2f}x")
    print(f"python -c pass (floor)         {python_ms:8.1f} ms")
    print(f"  ratio hugind/python-floor    {hugind_ms / python_ms:8.2f}x")
    print(f"deserialize cached engine      {deser_ms:8.3f} ms")
    print(f"instantiate + run trivial agent{run_ms:8.3f} ms (in-process, full run_agent)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
