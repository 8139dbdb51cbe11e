"""Op.start: async ops started on submit, replying from whichever thread sees them end.

Driven through a real Dispatcher with ops whose start hands back its ``done``,
so a test decides when each op ends: the slots (MAX_WORKERS at once, the rest
waiting in order and started by a worker), a start that hands the rest to a
worker, a start that refuses, and a run that ends while ops wait.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from hugind.errors import PermissionDenied
from hugind.host import dispatch
from hugind.host.dispatch import MAX_WORKERS, Dispatcher
from hugind.host.registry import HostContext, Op


class Held:
    """Ops that start and then wait for the test to end them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started: list[int] = []
        self.threads: list[str] = []
        self.dones: dict[int, Any] = {}
        self.arrived = threading.Condition(self.lock)

    def start(self, _ctx: HostContext, args: dict[str, Any], done: Any) -> None:
        with self.lock:
            self.started.append(args["i"])
            self.threads.append(threading.current_thread().name)
            self.dones[args["i"]] = done
            self.arrived.notify_all()

    def done_of(self, i: int) -> Any:
        with self.lock:
            assert self.arrived.wait_for(lambda: i in self.dones, timeout=10), f"op {i} never started"
            return self.dones[i]


def _dispatcher(tmp_path: Path, *ops: Op) -> Dispatcher:
    return Dispatcher(HostContext(policy=None, agent_root=tmp_path), ops)


def _submit(d: Dispatcher, name: str, **args: Any) -> int:
    return d.submit(json.dumps({"op": name, "args": args}).encode())


def _close(d: Dispatcher) -> None:
    """End the run and wait for its workers: none may outlive it (another test counts them)."""
    d.close()
    for thread in threading.enumerate():
        if thread.name == "hugind-op-worker":
            thread.join(10)
            assert not thread.is_alive(), "a worker outlived its run"


def _replies(d: Dispatcher, n: int) -> dict[int, Any]:
    out = {}
    while len(out) < n:
        item = d.next_completion(timeout=10)
        assert item is not None, f"only {len(out)} of {n} replies came"
        out[item[0]] = json.loads(item[1])
    return out


def test_at_most_max_workers_run_and_the_rest_start_in_order_as_slots_free(tmp_path: Path) -> None:
    held = Held()
    d = _dispatcher(tmp_path, Op("t.held", lambda c, a: None, is_async=True, start=held.start))
    total = MAX_WORKERS + 8
    ids = [_submit(d, "t.held", i=i) for i in range(total)]
    assert held.started == list(range(MAX_WORKERS))  # on submit, on this thread
    assert set(held.threads) == {threading.current_thread().name}
    for i in range(total):
        held.done_of(i)({"i": i})
        with held.lock:
            running = len(held.started) - (i + 1)
        assert running <= MAX_WORKERS
    assert held.started == list(range(total))
    assert all(name == "hugind-op-worker" for name in held.threads[MAX_WORKERS:])
    replies = _replies(d, total)
    assert [replies[op_id] for op_id in ids] == [{"ok": {"i": i}} for i in range(total)]
    assert d.pending == 0 and dispatch.ops_in_progress() == 0
    _close(d)


def test_a_start_may_hand_the_rest_to_a_worker_and_a_refusal_is_the_reply(tmp_path: Path) -> None:
    def start(_ctx: HostContext, args: dict[str, Any], _done: Any) -> Any:
        if args.get("refuse"):
            raise PermissionDenied("t: not this one")
        main = threading.current_thread().name
        return lambda: {"started_on": main, "finished_on": threading.current_thread().name}

    d = _dispatcher(tmp_path, Op("t.rest", lambda c, a: None, is_async=True, start=start))
    rest = _submit(d, "t.rest")
    refused = _submit(d, "t.rest", refuse=True)
    replies = _replies(d, 2)
    assert replies[rest]["ok"]["finished_on"] == "hugind-op-worker"
    assert replies[rest]["ok"]["started_on"] == threading.current_thread().name
    assert replies[refused] == {"error": {"kind": "PermissionDenied", "message": "t: not this one"}}
    _close(d)


def test_ops_waiting_for_a_slot_when_the_run_ends_get_an_error_not_silence(tmp_path: Path) -> None:
    held = Held()
    d = _dispatcher(tmp_path, Op("t.held", lambda c, a: None, is_async=True, start=held.start))
    ids = [_submit(d, "t.held", i=i) for i in range(MAX_WORKERS + 3)]
    d.close()  # the run ends: the waiting three never start
    for i in range(MAX_WORKERS):
        held.dones[i](PermissionDenied("t: cancelled"))
    replies = _replies(d, len(ids))
    assert all("error" in replies[op_id] for op_id in ids)
    assert [replies[op_id]["error"]["message"] for op_id in ids[MAX_WORKERS:]] == ["the run has ended"] * 3
    assert held.started == list(range(MAX_WORKERS))
    _close(d)  # and no worker was started for the ops that waited
