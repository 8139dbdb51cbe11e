"""The per-item contract the Ray runner calls (``run_item``), and the local pool's kill path."""

from __future__ import annotations

import os
import pickle
import signal
import threading
import time

import pytest

from hugind.batch.inputs import parse_lines
from hugind.batch.item import BatchItem, BatchRunOptions, ItemResult, run_item
from hugind.batch.pool import LocalPool
from hugind.errors import ExitCode
from tests.batch.helpers import ECHO_JS, ECHO_MANIFEST


def test_run_item_returns_plain_data_for_every_outcome(make_agent):
    agent = str(make_agent({"main.js": ECHO_JS}, ECHO_MANIFEST))
    options = BatchRunOptions(timeout=1, host_env={"TOKEN": "t", "PATH": "/bin"}, keep_audit=True)
    cases = {
        "ok": BatchItem("ok", 0, ("hello",), {"GREETING": "hi"}),
        "failed": BatchItem("failed", 1, ("fail", "now")),
        "timeout": BatchItem("timeout", 2, ("spin",)),
        "env": BatchItem("env", 3, (), {"PATH": "/tmp"}),
        "peek": BatchItem("peek", 4, ("peek",)),
        "bad-line": parse_lines(["{oops"])[0],
    }
    got = {name: run_item(agent, item, pickle.loads(pickle.dumps(options))) for name, item in cases.items()}
    for name, result in got.items():
        assert isinstance(result, ItemResult)
        assert pickle.loads(pickle.dumps(result)) == result, name  # crosses process boundaries as is
    assert (got["ok"].status, got["ok"].exit_code) == ("ok", ExitCode.OK)
    assert got["ok"].result == {"args": ["hello"], "env": {"GREETING": "hi", "TOKEN": "t"}}
    assert got["ok"].stdout == "echo hello\n"
    assert (got["failed"].status, got["failed"].exit_code) == ("failed", ExitCode.AGENT_FAILED)
    assert got["failed"].error.startswith("Error: asked to fail: now")
    assert (got["timeout"].status, got["timeout"].exit_code) == ("timeout", ExitCode.LIMIT_EXCEEDED)
    assert (got["env"].status, got["env"].exit_code) == ("error", ExitCode.USAGE)
    assert (got["peek"].status, got["peek"].result, got["peek"].denials) == ("ok", "caught PermissionDenied", 1)
    assert [e["decision"] for e in got["peek"].audit] == ["deny"]
    assert got["ok"].audit == []
    assert got["bad-line"].status == "error" and got["bad-line"].error.startswith("input line 1: not valid JSON")
    assert "audit" not in got["peek"].to_json()


def test_strict_run_item_fails_on_a_denial_even_when_the_agent_copes(make_agent):
    agent = str(make_agent({"main.js": ECHO_JS}, ECHO_MANIFEST))
    result = run_item(agent, BatchItem("p", 0, ("peek",)), BatchRunOptions(strict=True, host_env={}))
    assert (result.status, result.exit_code, result.denials) == ("failed", ExitCode.POLICY_DENIED, 1)


def test_a_missing_agent_is_an_item_error_not_an_exception(tmp_path):
    result = run_item(str(tmp_path / "gone"), BatchItem("x", 0), BatchRunOptions(host_env={}))
    assert (result.status, result.exit_code) == ("error", ExitCode.USAGE)
    assert "no such agent" in result.error


@pytest.mark.parametrize(
    ("sig", "status", "code", "message"),
    [
        (signal.SIGSTOP, "timeout", ExitCode.LIMIT_EXCEEDED, "its worker was killed"),
        (signal.SIGKILL, "error", ExitCode.INTERNAL, "died (signal 9)"),
    ],
)
def test_a_worker_that_stops_answering_or_dies_is_replaced(make_agent, sig, status, code, message):
    """A worker frozen mid-item (SIGSTOP: not even the sandbox deadline can act) is killed past
    timeout + grace and its item reported as a timeout; one that dies costs its item only.
    Either way the remaining items run on a new worker."""
    agent = str(make_agent({"main.js": ECHO_JS}, ECHO_MANIFEST))
    items = [BatchItem("slow", 0, ("wait",)), *(BatchItem(f"n{i}", i, (str(i),)) for i in range(1, 6))]
    pool = LocalPool(agent, BatchRunOptions(host_env={}), concurrency=1, item_timeout=30, grace=0)
    pool.limit = 3.0  # the item's own deadline (30 s) never comes: the pool's must
    results: list[ItemResult] = []
    frozen: list[int] = []

    def freeze_first_worker() -> None:
        while not pool.workers or pool.workers[0].item is None:
            time.sleep(0.01)
        pid = pool.workers[0].pid
        assert pid is not None
        os.kill(pid, sig)
        frozen.append(pid)

    thread = threading.Thread(target=freeze_first_worker)
    thread.start()
    started = time.monotonic()
    pool.run(items, results.append)
    thread.join()
    assert time.monotonic() - started < 25
    by_id = {r.id: r for r in results}
    assert (by_id["slow"].status, by_id["slow"].exit_code) == (status, code)
    assert message in by_id["slow"].error
    assert all(by_id[f"n{i}"].status == "ok" for i in range(1, 6))
    assert not os.path.exists(f"/proc/{frozen[0]}") or _is_zombie_or_gone(frozen[0])
    assert pool.workers == []  # closed at the end


def _is_zombie_or_gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1].startswith("Z")
    except FileNotFoundError:
        return True
