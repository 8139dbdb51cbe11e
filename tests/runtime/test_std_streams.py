"""The process's standard streams closed at start, or stdout's reader leaving mid-run.

Each case runs the real ``hugind`` in a subprocess whose descriptors the test
arranges itself: a pipe whose read end is already closed is a reader that left
before the first write, so the outcome does not depend on timing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.conftest import REPO

BROKEN_PIPE_STATUS = 141
HUGIND = [sys.executable, "-m", "hugind"]


def _run(
    args: list[str],
    *,
    stdout: int | None = None,
    stderr: int | None = None,
    close: tuple[int, ...] = (),
) -> int:
    """Run hugind with the given descriptors; ``close`` lists standard descriptors to close in the child."""

    def close_in_child() -> None:
        for fd in close:
            os.close(fd)

    proc = subprocess.run(
        [*HUGIND, *args],
        stdout=stdout,
        stderr=stderr,
        preexec_fn=close_in_child if close else None,
        cwd=REPO,
        timeout=60,
    )
    return proc.returncode


def _pipe_nobody_reads() -> int:
    """The write end of a pipe whose reader is gone: every write to it fails with EPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    return write_end


def _run_to_a_gone_reader(args: list[str], stream: str, tmp_path: Path) -> tuple[int, bytes]:
    """Run hugind with ``stream`` ("stdout" or "stderr") a pipe nobody reads and the
    other one a file: (exit code, what the file got)."""
    write_end = _pipe_nobody_reads()
    other = tmp_path / "other"
    try:
        with other.open("wb") as sink:
            if stream == "stdout":
                code = _run(args, stdout=write_end, stderr=sink.fileno())
            else:
                code = _run(args, stdout=sink.fileno(), stderr=write_end)
    finally:
        os.close(write_end)
    return code, other.read_bytes()


def _printer(make_agent: Callable[..., Path], lines: int) -> Path:
    loop = f'for (let i = 0; i < {lines}; i++) console.log("line " + i)\n'
    return make_agent({"main.js": loop + 'export default "done"\n'})


def test_closed_stdout_is_refused_before_the_agent_runs(make_agent, tmp_path):
    marker = tmp_path / "ran"
    agent = make_agent(
        {"main.js": f'fs.write_text("{marker}", "yes")\nexport default 1\n'},
        permissions={"filesystem": {"write": [str(tmp_path)]}},
    )
    err = tmp_path / "stderr"
    with err.open("wb") as sink:
        code = _run(["run", str(agent)], stderr=sink.fileno(), close=(1,))
    assert code == 2
    assert "standard output closed" in err.read_text()
    assert not marker.exists()


def test_closed_stderr_is_refused(make_agent, tmp_path):
    agent = _printer(make_agent, 1)
    out = tmp_path / "stdout"
    with out.open("wb") as sink:
        code = _run(["run", str(agent)], stdout=sink.fileno(), close=(2,))
    assert code == 2
    assert out.read_bytes() == b""


def test_closed_stdin_reads_as_empty(make_agent, tmp_path):
    agent = make_agent({"main.js": "export default 'ran'\n"})
    out = tmp_path / "stdout"
    with out.open("wb") as sink:
        code = _run(["run", str(agent)], stdout=sink.fileno(), close=(0,))
    assert code == 0
    assert out.read_text() == '"ran"\n'


def test_result_to_a_reader_that_left_ends_quietly_with_141(make_agent, tmp_path):
    agent = make_agent({"main.js": "export default 'x'.repeat(100000)\n"})
    assert _run_to_a_gone_reader(["run", str(agent)], "stdout", tmp_path) == (BROKEN_PIPE_STATUS, b"")


def test_guest_prints_to_a_reader_that_left_stop_the_agent_quietly(make_agent, tmp_path):
    # Before: wasmtime-py's output callback printed the BrokenPipeError and handed
    # wasmtime a bogus length, and the process aborted in a Rust panic (exit 134).
    agent = _printer(make_agent, 100_000)
    assert _run_to_a_gone_reader(["run", str(agent)], "stdout", tmp_path) == (BROKEN_PIPE_STATUS, b"")


def test_guest_prints_to_stderr_whose_reader_left_stop_the_agent(make_agent, tmp_path):
    agent = make_agent({"main.js": 'for (let i = 0; i < 100000; i++) console.error("e" + i)\nexport default 1\n'})
    assert _run_to_a_gone_reader(["run", str(agent)], "stderr", tmp_path) == (BROKEN_PIPE_STATUS, b"")


def test_guest_prints_to_a_full_disk_stop_the_run_with_a_named_error(make_agent, tmp_path):
    agent = _printer(make_agent, 100_000)
    proc = subprocess.run([*HUGIND, "run", str(agent)], stdout=subprocess.DEVNULL, cwd=REPO, timeout=60)
    assert proc.returncode == 0  # the control: the same agent with somewhere to write runs to the end
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([*HUGIND, "run", str(agent)], stdout=full, stderr=subprocess.PIPE, cwd=REPO, timeout=60)
    assert proc.returncode == 74
    assert proc.stderr.decode() == "hugind: error: cannot write the output: No space left on device\n"


def test_a_result_to_a_full_disk_is_a_named_error(make_agent):
    agent = make_agent({"main.js": "export default 'done'\n"})
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([*HUGIND, "run", str(agent)], stdout=full, stderr=subprocess.PIPE, cwd=REPO, timeout=60)
    assert proc.returncode == 74
    assert proc.stderr.decode() == "hugind: error: cannot write the output: No space left on device\n"


def test_agentic_events_to_a_reader_that_left_end_quietly_with_141(tmp_path):
    from tests.support.chat_server import ChatServer, Reply

    steps = [
        Reply('<tool_call>{"name":"search","args":{"path":".","pattern":"TODO"}}</tool_call>'),
        Reply("done"),
    ]
    with ChatServer(steps) as server:
        args = ["run", str(REPO / "examples/coder"), "--backend", server.url, "--json", "--", "find", "TODOs"]
        assert _run_to_a_gone_reader(args, "stdout", tmp_path) == (BROKEN_PIPE_STATUS, b"")


def test_other_commands_to_a_reader_that_left_end_quietly_with_141(make_agent, tmp_path):
    """Commands Typer runs (click used to end them with a bare exit 1, as a failure)."""
    agent = make_agent({"main.js": "export default 1\n"})
    assert _run_to_a_gone_reader(["check", str(agent)], "stdout", tmp_path) == (BROKEN_PIPE_STATUS, b"")
    assert _run_to_a_gone_reader(["--help"], "stdout", tmp_path) == (BROKEN_PIPE_STATUS, b"")


def test_other_commands_to_a_full_disk_name_the_cause_without_a_trace(make_agent, tmp_path):
    agent = make_agent({"main.js": "export default 1\n"})
    for args in (["--help"], ["check", str(agent)]):
        err = tmp_path / "err"
        with open("/dev/full", "wb") as full, err.open("wb") as sink:
            code = _run(args, stdout=full.fileno(), stderr=sink.fileno())
        assert (code, err.read_text()) == (74, "hugind: error: cannot write the output: No space left on device\n")
