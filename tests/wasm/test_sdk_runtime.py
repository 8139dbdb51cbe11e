"""The SDK at run time: progress events, the completion table, fire and forget, bad results."""

from __future__ import annotations

import pytest

from hugind.errors import AgentFailed
from hugind.host.registry import Op
from tests.runtime.helpers import run_captured


def _stream(ctx, args, progress):
    for i in range(args["n"]):
        progress({"token": i})
    return "streamed"


def test_progress_events_reach_the_callback_before_the_final_reply(guest_agent):
    op = Op("test.stream", _stream, is_async=True, streams=True)
    out = run_captured(guest_agent("async_table"), extra_ops=[op])
    assert out.result.value == {
        "progress": [{"token": 0}, {"token": 1}, {"token": 2}],
        "final": {"ok": "streamed"},
        # HUGIND_MAX_PENDING is 8 in this guest: the stream and 7 timers fill it,
        # and the 9th op is refused before it is submitted
        "table_full": 1,
        "pending_at_full": 8,
        "fire_and_forget_id_positive": 1,
        "pending_now": 0,
    }


def test_a_result_that_is_not_json_fails_the_run_instead_of_stalling(guest_agent):
    with pytest.raises(AgentFailed) as err:
        run_captured(guest_agent("bad_result"))
    assert err.value.name == "InvalidResult"
    assert err.value.js_message.startswith("host request is not valid JSON")
