"""Plain WASI hosts with no hugind in them, to run standalone builds the way anyone else would.

* ``run_wasmtime``: wasmtime-py with nothing but ``Linker.define_wasi()``;
* ``run_node``: node's ``node:wasi`` (tests/support/wasi_run.mjs) in a subprocess;
* ``run_hugind``: the ``hugind run`` command, for the reference output.

Each takes stdin as bytes and returns the exit status and the raw bytes of
stdout and stderr, so outputs compare byte for byte.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import wasmtime

REPO = Path(__file__).resolve().parents[2]
NODE_RUNNER = Path(__file__).resolve().parent / "wasi_run.mjs"


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: bytes
    stderr: bytes


@lru_cache(maxsize=1)
def _engine() -> wasmtime.Engine:
    return wasmtime.Engine()


@lru_cache(maxsize=8)
def _module(path: Path, mtime_ns: int) -> wasmtime.Module:
    return wasmtime.Module(_engine(), path.read_bytes())


def run_wasmtime(module: Path, *args: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> Ran:
    with tempfile.TemporaryDirectory(prefix="bare-wasi-") as tmp:
        files = {name: Path(tmp) / name for name in ("stdin", "stdout", "stderr")}
        files["stdin"].write_bytes(stdin)
        config = wasmtime.WasiConfig()
        config.argv = ["agent", *args]
        config.env = list((env or {}).items())
        config.stdin_file = str(files["stdin"])
        config.stdout_file = str(files["stdout"])
        config.stderr_file = str(files["stderr"])
        store = wasmtime.Store(_engine())
        store.set_wasi(config)
        linker = wasmtime.Linker(_engine())
        linker.define_wasi()
        instance = linker.instantiate(store, _module(module, module.stat().st_mtime_ns))
        start = instance.exports(store)["_start"]
        assert isinstance(start, wasmtime.Func)
        code = 0
        try:
            start(store)
        except wasmtime.ExitTrap as exit_:
            code = exit_.code
        del store, instance  # close the files before reading them
        return Ran(code, files["stdout"].read_bytes(), files["stderr"].read_bytes())


def node() -> str | None:
    return shutil.which("node")


def run_node(module: Path, *args: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> Ran:
    exe = node()
    assert exe is not None, "node is not installed"
    with tempfile.TemporaryDirectory(prefix="node-wasi-") as tmp:
        stdin_path, stdout_path = Path(tmp) / "stdin", Path(tmp) / "stdout"
        stdin_path.write_bytes(stdin)
        stdout_path.touch()
        base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
        proc = subprocess.run(
            [exe, "--no-warnings", str(NODE_RUNNER), str(module), str(stdin_path), str(stdout_path), *args],
            capture_output=True,
            env={**base, **(env or {})},
            timeout=120,
        )
        return Ran(proc.returncode, stdout_path.read_bytes(), proc.stderr)


def run_hugind(agent: Path, *args: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> Ran:
    proc = subprocess.run(
        [sys.executable, "-m", "hugind", "run", str(agent), "--", *args],
        input=stdin,
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        cwd=REPO,
    )
    return Ran(proc.returncode, proc.stdout, proc.stderr)
