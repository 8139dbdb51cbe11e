"""The engine build's progress reaches the user's terminal although pip captures the
build's output (issue 28: a first install was a silent ~2 minute spinner).

The build runs as pip runs it: stdout and stderr into a file pip keeps, in a
process whose controlling terminal is the user's (here a pseudo-terminal).
"""

from __future__ import annotations

import importlib.util
import os
import pty
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO

RUNTIME = REPO / "runtimes" / "js"

# The child: pip-like capture of fds 1 and 2, then the hook's progress and a real build
# (from the engine cache this suite's runs filled, into a scratch folder).
_CHILD = """
import importlib.util, os, sys
from pathlib import Path
captured = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
os.dup2(captured, 1); os.dup2(captured, 2)
def load(name):
    spec = importlib.util.spec_from_file_location(name, Path(sys.argv[2]) / f"{name}.py")
    module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module); return module
shown, builder = load("build_progress"), load("build_engine")
progress = shown.Progress(heartbeat_s=0.2)
progress.say("building the JS engine: " + shown.ESTIMATE)
progress.heartbeat("building the JS engine")
import time; time.sleep(0.5)
builder.build(Path(sys.argv[3]), progress=progress.say)
progress.close()
"""


def _run_at_a_terminal(tmp_path: Path) -> tuple[str, str]:
    captured = tmp_path / "pip-captured.log"
    pid, leader = pty.fork()
    if pid == 0:  # the child: its controlling terminal is the pty
        try:
            os.execv(sys.executable, [sys.executable, "-c", _CHILD, str(captured), str(RUNTIME), str(tmp_path / "out")])
        finally:
            os._exit(127)
    seen = b""
    deadline = time.monotonic() + 600  # a build from nothing takes minutes on a busy machine
    while time.monotonic() < deadline:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the child closed the terminal's last descriptor
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, captured.read_text()
    return seen.decode(errors="replace"), captured.read_text()


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, RUNTIME / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_progress_reaches_the_terminal_past_pips_capture(tmp_path):
    builder = _load("build_engine")
    sources = builder._cache_dir() / f"quickjs-ng-{builder.QUICKJS_NG_VERSION}"
    if not (os.environ.get("HUGIND_QUICKJS_SRC") or sources.is_dir()):
        pytest.skip("no QuickJS-NG sources cached by an install: the build would download them")
    terminal, captured = _run_at_a_terminal(tmp_path)
    assert "hugind: building the JS engine: about 70 s of CPU time" in terminal
    assert "hugind: still building the JS engine:" in terminal  # the heartbeat
    assert "hugind: JS engine cached" in terminal or "hugind: JS engine built in" in terminal
    assert captured == ""  # shown once, on the terminal, not again in pip's log
    assert (tmp_path / "out" / "hugind-js.wasm").stat().st_size > 100_000


def test_without_a_terminal_progress_goes_to_stderr(tmp_path, capfd):
    shown = _load("build_progress")
    pid = os.fork()
    if pid == 0:  # a process with no controlling terminal, as in a CI job
        try:
            os.setsid()
            progress = shown.Progress()
            progress.say("no terminal here")
            sys.stderr.write(f"on_terminal={progress.on_terminal}\n")
            progress.close()
        finally:
            sys.stderr.flush()
            os._exit(0)
    os.waitpid(pid, 0)
    err = capfd.readouterr().err
    assert "hugind: no terminal here\n" in err and "on_terminal=False" in err
