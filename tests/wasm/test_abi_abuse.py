"""ABI abuse from C: every bad pointer, length and take gets its documented code (ABI.md)."""

from __future__ import annotations

from hugind.sandbox.instance import E_FAULT, E_NO_RESPONSE, E_SMALL_BUFFER, E_TOO_BIG
from tests.runtime.helpers import run_captured


def test_abusive_calls_get_negative_codes_and_the_host_survives(guest_agent):
    out = run_captured(guest_agent("abi_abuse"))
    assert out.result.has_result is True
    codes = out.result.value
    assert codes == {
        # call: pointer or length outside memory, or a negative length -> E_FAULT
        "call_oob_ptr": E_FAULT,
        "call_past_end": E_FAULT,
        "call_negative_len": E_FAULT,
        # a length over 64 MiB -> E_TOO_BIG (checked before the bounds)
        "call_huge_len": E_TOO_BIG,
        "call_just_too_big": E_TOO_BIG,
        "submit_oob_ptr": E_FAULT,
        "submit_negative_len": E_FAULT,
        # take with an empty mailbox -> E_NO_RESPONSE
        "take_empty": E_NO_RESPONSE,
        "call_ok": 1,
        # take into a small (or zero, or negative) buffer -> E_SMALL_BUFFER, the reply stays
        "take_small": E_SMALL_BUFFER,
        "take_zero_cap": E_SMALL_BUFFER,
        "take_negative_cap": E_SMALL_BUFFER,
        # take to a pointer outside memory -> E_FAULT, the reply still stays
        "take_oob_ptr": E_FAULT,
        "take_after_errors": 1,
        "reply_intact": 1,
        "take_twice": E_NO_RESPONSE,
        # request errors travel as {"error": ...} replies, not codes
        "garbage_is_invalid_argument": 1,
        "call_async_op_invalid": 1,
        "submit_sync_op_id_positive": 1,
        "submit_sync_op_invalid": 1,
    }
    assert (E_FAULT, E_TOO_BIG, E_NO_RESPONSE, E_SMALL_BUFFER) == (-1, -2, -3, -4)
    assert out.stderr == ""


def test_call_into_checks_both_buffers_and_leaves_long_replies_for_take(guest_agent):
    out = run_captured(guest_agent("abi_call_into"))
    assert out.result.has_result is True
    assert out.result.value == {
        # the request side is checked as call's
        "req_oob_ptr": E_FAULT,
        "req_negative_len": E_FAULT,
        "req_huge_len": E_TOO_BIG,
        # a destination outside memory (or wrapping past 4 GiB, or a negative cap) -> E_FAULT
        "dst_oob_ptr": E_FAULT,
        "dst_wraps": E_FAULT,
        "dst_past_end": E_FAULT,
        "dst_negative_cap": E_FAULT,
        # ... refused before the request was served: nothing waits in the mailbox
        "nothing_queued_by_refusals": E_NO_RESPONSE,
        # a reply that fits is written to dst (and only its bytes), the mailbox stays empty
        "fits_len": 1,
        "fits_bytes": 1,
        "fits_rest_untouched": 1,
        "fits_then_take": E_NO_RESPONSE,
        "exact_cap": 1,
        # a reply longer than cap: its length comes back, dst is untouched, take gets it
        "small_returns_len": 1,
        "small_untouched": 1,
        "small_take_small": E_SMALL_BUFFER,
        "small_take": 1,
        "zero_cap_null_dst": 1,
        "zero_cap_take": 1,
        "garbage_is_invalid_argument": 1,
    }
    assert out.stderr == ""
