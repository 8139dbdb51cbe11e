"""Start-to-result time of a standalone build under a bare wasmtime host, against hugind, in one run.

Both run examples/hello-like work in-process, the module already compiled:

* standalone: a fresh instance of the `hugind build --standalone` module under
  wasmtime-py with only `Linker.define_wasi()`, then `_start` (which starts
  QuickJS, evaluates the prelude, loads the built-in bytecode, runs the agent);
* artifact: `run_agent` of the plain `hugind build` artifact of the same
  agent (policy, host, shared engine instance, bytecode from the host).

Usage: python bench/standalone_start.py [--repeat N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))
from _timing import median_ms, time_call

AGENT = "export default (input) => ({ greeting: `Hello, ${input.args[0] || 'world'}!` });\n"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=30)
    ns = parser.parse_args()

    import wasmtime

    from hugind.manifest import load_agent
    from hugind.run import RunOptions, run_agent

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "hello.js"
        src.write_text(AGENT)
        standalone, art = Path(tmp) / "standalone.wasm", Path(tmp) / "artifact.wasm"
        for extra, out in ((["--standalone"], standalone), ([], art)):
            cmd = [sys.executable, "-m", "hugind", "build", *extra, str(src), "-o", str(out)]
            subprocess.run(cmd, check=True, capture_output=True)

        engine = wasmtime.Engine()
        module = wasmtime.Module(engine, standalone.read_bytes())
        out_path = Path(tmp) / "out"

        def bare() -> None:
            store = wasmtime.Store(engine)
            config = wasmtime.WasiConfig()
            config.argv = ["hello"]
            config.stdout_file = str(out_path)
            store.set_wasi(config)
            linker = wasmtime.Linker(engine)
            linker.define_wasi()
            start = linker.instantiate(store, module).exports(store)["_start"]
            assert isinstance(start, wasmtime.Func)
            start(store)

        agent = load_agent(art)
        sink: list[bytes] = []
        options = RunOptions(stdout=sink.append, stderr=sink.append, host_env={})

        def hosted() -> None:
            run_agent(agent, options)

        bare()
        hosted()
        rows = [("standalone, bare wasmtime", bare), ("artifact, hugind run_agent", hosted)]
        results = [(label, median_ms(time_call(fn, ns.repeat))) for label, fn in rows]
        size = standalone.stat().st_size, art.stat().st_size

    print(f"hello agent, in-process, module compiled once; medians of {ns.repeat}")
    for label, ms in results:
        print(f"  {label:28s} {ms:8.2f} ms")
    print(f"  ratio standalone/artifact: {results[0][1] / results[1][1]:.2f}x")
    print(f"  file sizes: standalone {size[0]} bytes, artifact {size[1]} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
