"""Commands in the run's zygote, supervised by its reader thread (hugind/confine/watch.py).

Real agents, real zygotes and real processes, in both confinement modes: many
commands at once with mixed ends (exit codes, timeouts, output caps), more of
them than the dispatcher watches without a worker, and a run that ends while a
batch is under way. The escalation itself (SIGTERM, SIGKILL, the sandbox) is
also driven by hand against a zygote that never reports, with no clock involved.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from hugind.confine import zygotes
from hugind.confine.watch import Timing, Watch
from hugind.errors import LimitExceeded
from tests.redteam.helpers import run_attack
from tests.support.processes import marker, wait_gone, wait_present


def through_zygote(n: int) -> int:
    """How many of ``n`` commands the zygote takes: all, unless HUGIND_ZYGOTE=0 sends every
    one the per-command way (where the same results must come all the same)."""
    return n if zygotes.enabled() else 0


@pytest.fixture
def watched(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts commands handed to a zygote with a watch (the path under test)."""
    count: list[int] = []
    start = zygotes.Zygote.start

    def counting(self, plan, out_w, err_w, watch=None):  # type: ignore[no-untyped-def]
        if watch is not None:
            count.append(1)
        return start(self, plan, out_w, err_w, watch)

    monkeypatch.setattr(zygotes.Zygote, "start", counting)
    return count


MIXED = """
const commands = [];
for (let i = 0; i < 6; i++) {
  commands.push(["echo out-" + i + "; echo err-" + i + " >&2; exit " + i, "code"]);
  commands.push(["sleep 30", "timeout"]);
  commands.push(["head -c 100000 /dev/zero | tr '\\\\0' x", "cap"]);
  commands.push(["true", "true"]);
}
const results = await Promise.all(commands.map(([c]) => run_command(c, {detailed: true})));
return results.map((r, i) => [commands[i][1], r]);
"""


def test_many_commands_at_once_each_end_as_its_own(mode, tmp_path: Path, watched: list[int]) -> None:
    permissions = {"filesystem": {"read": ["."]}, "shell": {"allow": True, "timeout": 1, "max_output": 1000}}
    out = run_attack(tmp_path / "agent", MIXED, permissions)
    assert out.value["ok"], out.value
    results = out.value["value"]
    assert len(results) == 24 and len(watched) == through_zygote(24)
    codes = []
    for kind, r in results:
        if kind == "code":
            codes.append(r["exit_code"])
            i = r["exit_code"]
            expected = (f"out-{i}\n", f"err-{i}\n", False, False)
            assert (r["stdout"], r["stderr"], r["timed_out"], r["truncated"]) == expected
        elif kind == "timeout":
            assert r["timed_out"] and not r["truncated"] and r["stdout"] == "", r
        elif kind == "cap":
            assert r["truncated"] and not r["timed_out"] and r["stdout"] == "x" * 1000, r
        else:
            assert r == {"stdout": "", "stderr": "", "exit_code": 0, "timed_out": False, "truncated": False}
    assert codes == list(range(6))


def test_more_commands_than_are_watched_without_a_worker(mode, tmp_path: Path, watched: list[int]) -> None:
    body = """
    const n = 48;
    const all = [];
    for (let i = 0; i < n; i++) all.push(run_command("sleep 0.3; echo " + i));
    return await Promise.all(all);
    """
    out = run_attack(tmp_path / "agent", body, {"filesystem": {"read": ["."]}, "shell": {"allow": True}})
    assert out.value["ok"] is True, out.value
    wrong = {i: got for i, got in enumerate(out.value["value"]) if got != f"{i}\n"}
    assert wrong == {} and len(out.value["value"]) == 48
    assert len(watched) == through_zygote(48)  # past the slots, a worker starts each the same way as a slot frees


def test_a_run_ending_mid_batch_leaves_no_command_behind(mode, tmp_path: Path, watched: list[int]) -> None:
    mark = marker()
    body = f"""
    const all = [];
    for (let i = 0; i < 8; i++) all.push(run_command("sleep {mark}"));
    all.push(run_command("true"));
    return await Promise.all(all);
    """
    permissions = {"filesystem": {"read": ["."]}, "shell": {"allow": True}, "limits": {"timeout": 2}}
    ended = threading.Event()
    seen: list[int] = []

    def watch_them() -> None:
        seen.extend(wait_present(mark, within=10, count=8))
        ended.wait(30)

    spy = threading.Thread(target=watch_them)
    spy.start()
    try:
        with pytest.raises(LimitExceeded, match="deadline"):
            run_attack(tmp_path / "agent", body, permissions)
    finally:
        ended.set()
        spy.join()
    assert len(seen) >= 8, "the batch never started"
    assert wait_gone(mark, within=5) == []
    assert len(watched) == through_zygote(9)


# ---- the escalation, by hand --------------------------------------------------------


class _Silent:
    """A zygote that takes signals and never reports: what hugind must not trust."""

    def __init__(self) -> None:
        self.signals: list[str] = []
        self.killed = 0

    def signal_tree(self, sig: str) -> None:
        self.signals.append(sig)

    def kill(self) -> None:
        self.killed += 1


@contextlib.contextmanager
def _watch(
    results: list[object], cancelled: threading.Event | None = None
) -> Iterator[tuple[Watch, _Silent, int, int]]:
    """A watch over two fresh pipes and a silent zygote; the pipes' write ends are the
    command's, closed when the block ends (the watch's own ends close at ``finish``)."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    zygote = _Silent()
    watch = Watch(
        out_r,
        err_r,
        8,
        100.0,
        cancelled or threading.Event(),
        Timing(drain_grace=0.5, term_grace=0.3, kill_wait=1.0, poll=0.05),
        results.append,
        lambda: TimeoutError("cancelled"),
        0.0,
    )
    watch.signal_tree = zygote.signal_tree
    watch.kill_sandbox = zygote.kill
    try:
        yield watch, zygote, out_w, err_w
    finally:
        for fd in (out_w, err_w):
            with contextlib.suppress(OSError):
                os.close(fd)


def test_a_zygote_that_never_reports_is_escalated_to_its_sandbox_then_given_up() -> None:
    results: list[object] = []
    with _watch(results) as (watch, zygote, _, _):
        assert not watch.tick(99.0) and zygote.signals == []
        assert not watch.tick(100.0) and zygote.signals == ["term"] and watch.timed_out
        assert watch.due() == pytest.approx(100.3)
        assert not watch.tick(100.2) and zygote.signals == ["term"]
        assert not watch.tick(100.3) and zygote.signals == ["term", "kill"] and zygote.killed == 0
        assert not watch.tick(101.3) and zygote.killed == 1
        assert watch.tick(102.3)  # not even the sandbox's end was reported: the command is given up
        watch.finish()
        watch.finish()  # once only
    assert results == [{"stdout": "", "stderr": "", "exit_code": 137, "timed_out": True, "truncated": False}]


def test_output_past_the_cap_stops_the_command_and_a_report_ends_the_escalation() -> None:
    results: list[object] = []
    with _watch(results) as (watch, zygote, out_w, _):
        os.write(out_w, b"0123456789")
        assert watch.wants_poll(0.03)
        assert not watch.read(watch.out_fd)  # past the cap of 8: no more reading
        assert not watch.read(watch.err_fd)
        assert not watch.tick(0.02) and zygote.signals == ["term"]
        watch.exited(143, 0.1)
        assert watch.tick(0.1)
        watch.finish()
    assert results == [{"stdout": "01234567", "stderr": "", "exit_code": 143, "timed_out": False, "truncated": True}]


def test_cancellation_replies_with_the_error_once_the_command_is_gone() -> None:
    results: list[object] = []
    cancelled = threading.Event()
    with _watch(results, cancelled) as (watch, zygote, _, _):
        assert not watch.tick(1.0)
        cancelled.set()
        assert not watch.tick(1.0) and zygote.signals == ["term"]
        watch.exited(None, 1.1)
        assert watch.tick(1.1)
        watch.finish()
    assert len(results) == 1 and isinstance(results[0], TimeoutError)


def test_a_finished_command_drains_its_pipes_then_ends() -> None:
    results: list[object] = []
    with _watch(results) as (watch, _, out_w, err_w):
        os.write(out_w, b"hi")
        os.close(out_w)
        os.close(err_w)
        assert not watch.wants_poll(0.001)  # a short command is not polled before its report
        watch.exited(0, 0.002)
        assert watch.wants_poll(0.002)
        assert watch.read(watch.out_fd) and not watch.read(watch.out_fd) and not watch.read(watch.err_fd)
        assert watch.tick(0.003)
        watch.finish()
    assert results == [{"stdout": "hi", "stderr": "", "exit_code": 0, "timed_out": False, "truncated": False}]
