"""The start-up check of the raw path (hugind/sandbox/raw_ffi.py): when a private binding
of wasmtime is not what hugind expects, the run takes the public path, says so once on
stderr, and gives exactly what the public path gives.

Each broken binding is made in a subprocess, before hugind runs: a ctypes signature
with a parameter more (as a new wasmtime changing a C function would look), a symbol
gone, and a function whose shape is right but whose answer is wrong (which only the
self-test can see).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hugind.sandbox import raw_ffi
from tests.differential.agents import REPO, describe, normalise
from tests.differential.conftest import clean_env

# What the warning names as the cause, per break: only the self-test sees a wrong answer.
CAUSES = {
    "signature": "changed: wasmtime_func_call_unchecked",
    "missing": "cannot read the bindings: AttributeError",
    "wrong-answer": "self-test: a raw call of a raw import (i32, i32): got -100020, expected -100021",
}
WARNING = "hugind: warning: wasmtime's private bindings are not what hugind expects ("
BREAKS = {
    "signature": (
        "import ctypes\nfrom wasmtime import _bindings\n"
        "f = _bindings._wasmtime_func_call_unchecked\nf.argtypes = [*f.argtypes, ctypes.c_int]\n"
    ),
    "missing": "from wasmtime import _ffi\ndel _ffi.wasmtime_linker_define_func_unchecked\n",
    "wrong-answer": (
        "from wasmtime import _ffi\nreal = _ffi.wasmtime_func_call_unchecked\n"
        "def call(store, func, values, n, trap):\n"
        "    error = real(store, func, values, n, trap)\n"
        "    values[0].i32 += 1\n"
        "    return error\n"
        "_ffi.wasmtime_func_call_unchecked = call\n"
    ),
}


def _drive_broken(break_code: str, spec: Path) -> dict:
    run = f"import sys\nsys.argv[1:] = [{str(spec)!r}]\nfrom tests.differential.driver import main\nmain()\n"
    code = break_code + run
    proc = subprocess.run(
        [sys.executable, "-c", code],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=clean_env(),
        cwd=REPO,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-4000:]
    return json.loads(proc.stdout)


@pytest.mark.parametrize("broken", sorted(BREAKS))
def test_a_broken_binding_falls_back_to_the_public_path_with_one_warning(broken, cases, drive, tmp_path):
    picked = [case for case in cases if case["name"] in ("js-files-denied", "wat-command-exit-3", "hello")]
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"repeat": 2, "audit_dir": str(tmp_path / "audit"), "cases": picked}))
    report = _drive_broken(BREAKS[broken], spec)
    assert report["raw"] is False
    public = drive("public", HUGIND_RAW_FFI="0")
    stderr_total = "".join(run["stderr"] for runs in report["runs"].values() for run in runs)
    assert stderr_total.count(WARNING) == 1, stderr_total
    for case in picked:
        for i, run in enumerate(report["runs"][case["name"]]):
            run = normalise(run)
            if i == 0 and case is picked[0]:  # the first run of the process saw the check
                line, _, rest = run["stderr"].partition("\n")
                assert CAUSES[broken] in line, line
                assert line.startswith(WARNING) and line.endswith(
                    "host calls take wasmtime-py's public API instead (slower)"
                )
                run = {**run, "stderr": rest}
            expected = normalise(public["runs"][case["name"]][i])
            assert run == expected, f"{broken}: {case['name']} run {i}: {describe(run)}\npublic: {describe(expected)}"


def test_the_cli_warns_once_and_runs_the_same(tmp_path, cases):
    case = next(case for case in cases if case["name"] == "wat-command-exit-3")
    code = BREAKS["signature"] + "import sys\nfrom hugind.entry import main\nmain()\n"
    argv = ["run", case["agent"]]
    env = clean_env(HUGIND_WARM="0")
    broken = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, env=env, cwd=REPO, timeout=120)
    plain = subprocess.run(
        [sys.executable, "-m", "hugind", *argv],
        capture_output=True,
        env={**env, "HUGIND_RAW_FFI": "0"},
        cwd=REPO,
        timeout=120,
    )
    line, _, rest = broken.stderr.decode().partition("\n")
    assert line.startswith(WARNING) and "changed: wasmtime_func_call_unchecked" in line, broken.stderr
    assert (broken.returncode, broken.stdout, rest) == (plain.returncode, plain.stdout, plain.stderr.decode())


def test_the_installed_wasmtime_passes_the_check():
    # On a wasmtime whose bindings changed, this fails: record the new shapes in raw_ffi._EXPECTED
    # (python -m hugind.sandbox.raw_ffi) once the raw path is known to be right on it, or keep the pin.
    assert raw_ffi.check() is None
