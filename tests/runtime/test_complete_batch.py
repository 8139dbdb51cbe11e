"""Completions delivered several to one guest entry (hugind_complete_many, driver.py).

The real engine and real worker threads: many timers finish together, so the
driver hands them over in batches; the guest must stop a batch once it has
reported its outcome, and a malformed batch must be refused whole."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from hugind.manifest import load_agent
from hugind.run import RunOptions, make_policy, open_session
from hugind.sandbox.driver import BATCH_EXPORT
from hugind.sandbox.session import AgentSession
from tests.runtime.helpers import run_captured

MANIFEST = "name: batch\nentry_point: main.js\nmode: script\n"


def _agent(tmp_path: Path, source: str) -> Path:
    (tmp_path / "agent.yaml").write_text(MANIFEST)
    (tmp_path / "main.js").write_text(source)
    return tmp_path


def test_many_timers_complete_in_order_of_their_callbacks(tmp_path: Path) -> None:
    agent = _agent(
        tmp_path,
        """
const seen = [];
const tick = (i) => new Promise((resolve) => setTimeout(() => { seen.push(i); resolve(i); }, 0));
export default async () => {
  let total = 0;
  for (let round = 0; round < 20; round++) {
    const batch = [];
    for (let i = 0; i < 16; i++) batch.push(tick(round * 16 + i));
    total += (await Promise.all(batch)).length;
  }
  return { total, distinct: new Set(seen).size };
};
""",
    )
    out = run_captured(agent)
    assert out.result.value == {"total": 320, "distinct": 320}
    assert out.stderr == ""


def test_no_callback_runs_after_the_agent_reported_its_result(tmp_path: Path) -> None:
    # Main awaits the first of 61 timers; the others finish with it, in the
    # same batches. Whichever ran before the report is counted in the result,
    # and none may run after it: the batch stops there and the host delivers
    # nothing more.
    agent = _agent(
        tmp_path,
        """
let fired = 0;
export default async () => {
  const first = new Promise((resolve) => setTimeout(resolve, 0));
  for (let i = 0; i < 60; i++) setTimeout(() => { fired++; console.log("fired " + fired); }, 0);
  await first;
  return fired;
};
""",
    )
    for _ in range(5):
        out = run_captured(agent)
        lines = [line for line in out.stdout.splitlines() if line.startswith("fired ")]
        assert len(lines) == out.result.value


@pytest.fixture
def idle_session(tmp_path: Path) -> Iterator[AgentSession]:
    """A JS session whose agent has finished: its engine still takes completions."""
    agent = load_agent(_agent(tmp_path, "export default 1;\n"))
    options = RunOptions(stdout=lambda b: None, stderr=lambda b: None, host_env={})
    session = open_session(agent, options, make_policy(agent, options), {}, {})
    try:
        session.run_main()
        yield session
    finally:
        session.close()


def _deliver(session: AgentSession, payload: bytes, length: int | None = None) -> int | None:
    ptr = session.instance.write_bytes(payload, budget_s=10)
    return session.instance.enter(BATCH_EXPORT, ptr, len(payload) if length is None else length, budget_s=10)


def _record(op_id: int, reply: bytes, length: int | None = None) -> bytes:
    return struct.pack("<ii", op_id, len(reply) if length is None else length) + reply


def test_a_well_formed_batch_is_consumed_whole(idle_session: AgentSession) -> None:
    # Unknown op ids: the prelude ignores them, as hugind_complete does.
    payload = _record(90001, b'{"ok":1}') + _record(90002, b"") + _record(90003, b'{"progress":2}')
    assert _deliver(idle_session, payload) == 3


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b"\x01\x00\x00\x00\x02", id="header-cut-short"),
        pytest.param(_record(90001, b'{"ok":1}', length=9), id="reply-past-the-end"),
        pytest.param(_record(90001, b'{"ok":1}', length=-1), id="negative-reply-length"),
        pytest.param(_record(90001, b'{"ok":1}') + b"\x00\x00\x00", id="trailing-bytes"),
        pytest.param(_record(90001, b"", length=2**31 - 1), id="huge-reply-length"),
    ],
)
def test_a_malformed_batch_is_refused_before_anything_is_delivered(idle_session: AgentSession, payload: bytes) -> None:
    assert _deliver(idle_session, payload) == -2
    # The engine is unharmed: a good batch still goes through.
    assert _deliver(idle_session, _record(90004, b'{"ok":null}')) == 1


def test_a_negative_batch_length_is_refused(idle_session: AgentSession) -> None:
    assert _deliver(idle_session, _record(90001, b"{}"), length=-5) == -1
