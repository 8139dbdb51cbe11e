"""Timers (time.sleep, behind setTimeout) wait in the dispatcher, not on worker threads.

So a guest's timers never hold the workers its other async ops need, and a
timer costs no thread handoff. Real dispatchers and a real engine."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from hugind.host import clock
from hugind.host.dispatch import Dispatcher
from hugind.host.registry import HostContext, Op
from tests.runtime.helpers import run_captured


def _dispatcher(seconds: float = 60, extra: list[Op] | None = None) -> Dispatcher:
    ctx = HostContext(policy=None, agent_root=Path("/"), deadline=time.monotonic() + seconds)
    return Dispatcher(ctx, [*clock.OPS, *(extra or [])])


def _sleep(ms: Any) -> bytes:
    return json.dumps({"op": "time.sleep", "args": {"ms": ms}}).encode()


def _next(d: Dispatcher) -> tuple[int, Any]:
    item = d.next_completion(timeout=30)
    assert item is not None
    return item[0], json.loads(item[1])


def test_timers_start_no_thread_and_leave_the_workers_to_other_ops() -> None:
    echo = Op("test.echo", lambda ctx, args: args["n"], is_async=True)
    d = _dispatcher(extra=[echo])
    for _ in range(40):  # more than the workers there can ever be
        d.submit(_sleep(60_000))
    assert d._workers == 0
    op_id = d.submit(b'{"op":"test.echo","args":{"n":7}}')
    assert _next(d) == (op_id, {"ok": 7})  # not stuck behind the timers
    assert d.pending == 40
    d.close()


def test_timers_fire_in_order_of_their_due_time_then_of_submission() -> None:
    d = _dispatcher()
    late, early, middle = d.submit(_sleep(60)), d.submit(_sleep(0)), d.submit(_sleep(30))
    also_early = d.submit(_sleep(0))
    order = [_next(d) for _ in range(4)]
    assert order == [(early, {"ok": None}), (also_early, {"ok": None}), (middle, {"ok": None}), (late, {"ok": None})]
    assert d.pending == 0
    assert d.next_completion(timeout=0) is None


def test_a_timer_past_the_deadline_ends_at_it_with_timeout() -> None:
    d = _dispatcher(seconds=0.2)
    op_id = d.submit(_sleep(60_000))
    got_id, reply = _next(d)
    assert got_id == op_id
    assert reply["error"]["kind"] == "Timeout"
    assert "60000 ms timer outlived the run's deadline" in reply["error"]["message"]


def test_bad_timer_arguments_are_refused_at_once() -> None:
    d = _dispatcher()
    for bad, words in ((-1, "non-negative"), ("soon", "must be int or float"), (True, "got bool")):
        op_id = d.submit(_sleep(bad))
        got_id, reply = _next(d)
        assert got_id == op_id
        assert reply["error"]["kind"] == "InvalidArgument"
        assert words in reply["error"]["message"]
    assert d.pending == 0


def test_long_timers_do_not_starve_a_js_agents_other_async_ops(tmp_path: Path) -> None:
    # 40 minute-long timers, then a fetch the policy refuses (a worker's job).
    # Were timers sleeping on the 32 workers, the fetch would wait for one to
    # end and the run would hit its 20 s limit.
    (tmp_path / "agent.yaml").write_text(
        "name: timers\nentry_point: main.js\nmode: script\npermissions:\n  limits:\n    timeout: 20\n"
    )
    (tmp_path / "main.js").write_text(
        """
export default async () => {
  for (let i = 0; i < 40; i++) setTimeout(() => {}, 60000);
  try {
    await http_get_async("http://127.0.0.1:9/");
    return "fetched";
  } catch (e) {
    return e.name;
  }
};
"""
    )
    out = run_captured(tmp_path)
    assert out.result.value == "PermissionDenied"
