"""``hugind.process_end.end_early`` ends a process as ``sys.exit`` would, minus the shutdown.

Each case runs one script twice in a fresh interpreter, ending it with ``sys.exit(code)``
and with ``end_early(code)`` (then ``sys.exit(code)``, reached only when ``end_early``
declines): what the parent sees must be the same, and the shutdown must have been
skipped exactly when nothing could tell.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

_SCRIPT = """
import atexit, os, sys, threading, time
from hugind.process_end import end_early
threading._register_atexit(os.write, 2, b"<shutdown>")  # runs in interpreter shutdown only
{setup}
if sys.argv[1] == "early":
    end_early({code})
sys.exit({code})
"""

# Many pipe buffers; the rest of it still in Python's buffer at the end (buffered: see _run).
_BIG = 'sys.stdout.write("x" * 300_000)'

CASES = {
    # name: (setup, code, shutdown skipped by end_early)
    "output": (_BIG + '\nsys.stderr.write("err line")', "0", True),
    "exit code": (_BIG, "3", True),
    "none": ("print('done')", "None", True),
    "message": (_BIG, "'bye: a message'", False),
    "exit handlers": (
        "atexit.register(print, 'handler ran')\natexit.register(sys.stdout.write, 'y' * 100_000)",
        "4",
        True,
    ),
    "a thread to wait for": (
        "threading.Thread(target=lambda: (time.sleep(0.3), print('thread done', flush=True))).start()",
        "0",
        False,
    ),
    "a daemon thread": ("threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\nprint(1)", "0", True),
    "an unusual code": ("print(1)", "[1, 2]", False),
}


def _run(setup: str, code: str, mode: str, stdout: int | None = subprocess.PIPE) -> tuple[int, bytes, bytes]:
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT.format(setup=setup, code=code), mode],
        stdout=stdout,
        stderr=subprocess.PIPE,
        cwd=REPO,
        env={**{k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}, "PYTHONPATH": str(REPO)},
        timeout=60,
    )
    return proc.returncode, proc.stdout or b"", proc.stderr


@pytest.mark.parametrize("name", list(CASES))
def test_end_early_is_seen_as_sys_exit(name):
    setup, code, skips = CASES[name]
    rc, out, err = _run(setup, code, "exit")
    rc_early, out_early, err_early = _run(setup, code, "early")
    assert b"<shutdown>" in err
    assert (b"<shutdown>" not in err_early) is skips, err_early
    assert (rc_early, out_early, err_early.replace(b"<shutdown>", b"")) == (rc, out, err.replace(b"<shutdown>", b""))


def test_the_cases_see_what_they_claim():
    # Without these the comparison above could pass on two empty outputs.
    assert _run(*CASES["output"][:2], "early")[1] == b"x" * 300_000
    assert _run(*CASES["exit code"][:2], "early")[0] == 3
    assert _run(*CASES["message"][:2], "early")[0:3:2] == (1, b"bye: a message\n<shutdown>")  # left to Python
    rc, out, _ = _run(*CASES["exit handlers"][:2], "early")
    assert (rc, out.count(b"handler ran"), out.count(b"y")) == (4, 1, 100_000)  # each handler once
    assert b"thread done" in _run(*CASES["a thread to wait for"][:2], "early")[1]


@pytest.mark.parametrize(
    ("setup", "status"),
    [("print('x')", 120), (_BIG, 1)],
    ids=["fails at the final flush", "fails while writing"],
)
def test_a_closed_stdout_is_left_to_the_interpreter(setup, status):
    # A write or the final flush fails: end_early declines, and the interpreter reports it as ever.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        seen = [_run(setup, "0", mode, stdout=write_end) for mode in ("exit", "early")]
    finally:
        os.close(write_end)
    assert seen[0] == seen[1]
    assert seen[0][0] == status and b"BrokenPipeError" in seen[0][2]
