"""The warm server checks the raw host-call path once before it forks (hugind/warm/child.py);
a child keeps a passing verdict made under its client's HUGIND_RAW_FFI, and decides again
(falling back, with the warning on its own stderr) when the check failed or the client's
variable says otherwise."""

from __future__ import annotations

import ast
import os

import pytest

from hugind.sandbox import raw_ffi
from hugind.warm import child


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(raw_ffi, "_raw", None)
    monkeypatch.setattr(raw_ffi, "reason", None)
    monkeypatch.setattr(child, "_RAW_CHECKED", False)
    monkeypatch.setattr(child, "_RAW_CHOICE", None)
    monkeypatch.delenv(raw_ffi.ENV, raising=False)
    import hugind.sandbox.engine  # noqa: F401  # hands raw_ffi its self-test, as a run's imports do


def _in_a_fork(client_env: dict[str, str]) -> tuple[object, object]:
    """(raw_ffi's verdict before the child asks, what enabled() says) in a forked child with
    the client's environment, as the warm server forks one."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            os.environ.clear()
            os.environ.update(client_env)
            child._raw_path_verdict()
            before = raw_ffi._raw
            os.write(write, repr((before, raw_ffi.enabled())).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        answer = f.read()
    os.waitpid(pid, 0)
    return ast.literal_eval(answer)


def test_a_passing_check_is_made_once_and_kept_by_the_child(fresh):
    child.check_raw_path()
    verdict = raw_ffi._raw
    assert verdict is not None  # decided in the "server"
    if not verdict:
        pytest.skip(f"the raw path is off here: {raw_ffi.reason}")
    assert _in_a_fork({}) == (True, True)


def test_a_client_that_turns_the_raw_path_off_decides_for_itself(fresh):
    child.check_raw_path()
    assert _in_a_fork({raw_ffi.ENV: "0"}) == (None, False)


def test_a_failed_check_is_decided_again_in_the_child(fresh, monkeypatch):
    monkeypatch.setattr(raw_ffi, "check", lambda: "changed: wasmtime_func_call_unchecked")
    child.check_raw_path()
    assert raw_ffi._raw is False and raw_ffi.reason
    # The child forgets the verdict and checks again: here it fails again, so it falls back.
    assert _in_a_fork({}) == (None, False)
