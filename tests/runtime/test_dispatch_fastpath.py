"""The dispatcher's shortcuts give exactly what the general path gives.

Plain requests skip json.loads, string replies skip the encoder, and the
driver may take completions in batches and hand some back; each is checked
here against the general path on the same input."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hugind.errors import HostCallError
from hugind.host import clock, dispatch
from hugind.host.dispatch import Dispatcher, encode_ok
from hugind.host.registry import HostContext, Op


def _echo(ctx: HostContext, args: dict[str, Any]) -> Any:
    return args


def _dispatcher(**ctx: Any) -> Dispatcher:
    ops = [Op("fs.exists", _echo), Op("fs.cwd", _echo), *clock.OPS]
    return Dispatcher(HostContext(policy=None, agent_root=Path("/"), **ctx), ops)


def _general(d: Dispatcher, raw: bytes) -> Any:
    """What the JSON path makes of ``raw`` (a trailing space defeats the shortcut, not the meaning)."""
    spaced = raw + b" "
    assert dispatch._PLAIN_REQUEST.fullmatch(spaced) is None
    return _outcome(d, spaced)


def _outcome(d: Dispatcher, raw: bytes) -> Any:
    try:
        op, args = d._parse(raw)
    except HostCallError as err:
        return ("error", err.kind, str(err))
    return (op.name, args)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"op":"fs.cwd","args":{}}',
        b'{"op":"fs.exists","args":{"path":"agent.yaml"}}',
        b'{"op":"fs.exists","args":{"path":""}}',
        b'{"op":"fs.exists","args":{"path":"d\xc3\xa9j\xc3\xa0/\xf0\x9f\x98\x80.txt"}}',
        b'{"op":"fs.exists","args":{"path":"/etc/passwd"}}',
        b'{"op":"fs.nope","args":{"path":"x"}}',  # unknown op: the general path names it
        b'{"op":"fs.exists","args":{"path":"\xed\xa0\x80"}}',  # a lone surrogate's 3-byte form
        b'{"op":"fs.exists","args":{"path":"\xff"}}',  # not UTF-8
        b'{"op":"fs.exists","args":{"path":"a\\"b"}}',  # escapes: never the shortcut
        b'{"op":"fs.exists","args":{"path":"\\ud800"}}',
    ],
)
def test_plain_requests_parse_as_json_does(raw: bytes) -> None:
    d = _dispatcher()
    assert _outcome(d, raw) == _general(d, raw)


def test_the_shortcut_really_is_taken_for_plain_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    d = _dispatcher()

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("json.loads ran for a plain request")

    monkeypatch.setattr(dispatch.json, "loads", refuse)
    assert d.call(b'{"op":"fs.exists","args":{"path":"notes.txt"}}') == b'{"ok":{"path":"notes.txt"}}'
    assert d.call(b'{"op":"fs.cwd","args":{}}') == b'{"ok":{}}'


@pytest.mark.parametrize(
    "value",
    ["", ".", "plain", 'quote " and \\ back', "tab\tnew\nline\x00\x1f", "déjà 😀", "\u2028\u2029", "lone \ud800 x"],
)
def test_string_replies_encode_as_json_dumps_does(value: str) -> None:
    general = dispatch._encode({"ok": value})
    assert encode_ok(value) == general
    assert json.loads(encode_ok(value), strict=False) == {"ok": value}


class _Text(str):
    """A str subclass is encoded by the general path (its own methods may differ)."""


def test_str_subclasses_take_the_general_path() -> None:
    assert encode_ok(_Text("x")) == b'{"ok":"x"}'


def _settle(d: Dispatcher, count: int) -> list[tuple[int, bytes]]:
    got: list[tuple[int, bytes]] = []
    deadline = time.monotonic() + 10
    while len(got) < count and time.monotonic() < deadline:
        item = d.next_completion(timeout=0.5)
        if item is not None:
            got.append(item)
            got.extend(d.ready_completions(count - len(got)))
    return got


def test_completions_handed_back_come_first_and_stay_pending() -> None:
    d = _dispatcher(deadline=time.monotonic() + 60)
    ids = [d.submit(b'{"op":"time.sleep","args":{"ms":0}}') for _ in range(6)]
    got = _settle(d, 6)
    assert sorted(op_id for op_id, _ in got) == ids
    assert d.pending == 0
    d.unread(got[2:])
    assert d.pending == 4  # handed back: not delivered, so still awaited
    assert d.next_completion(timeout=0) == got[2]
    assert d.ready_completions(10) == got[3:]
    assert d.pending == 0
    assert d.next_completion(timeout=0) is None
    d.close()


def test_progress_events_handed_back_do_not_count_as_pending() -> None:
    d = _dispatcher()
    with d._lock:
        d._in_flight.add(7)
    d._completions.put((7, b'{"progress": "tok"}', False))
    d._completions.put((7, b'{"ok":"done"}', True))
    taken = d.ready_completions(5)
    assert d.pending == 0
    d.unread(taken[:1])  # only the progress event goes back
    assert d.pending == 0
    d.unread(taken[1:])
    assert d.pending == 1
    assert d.ready_completions(5) == taken[1:] + taken[:1]


def test_slow_ops_still_run_in_parallel_and_do_not_block_sync_calls() -> None:
    # Each op waits at a barrier for all eight: run one after another, they would
    # break it. While they are held, a sync call is still served.
    barrier = threading.Barrier(8, timeout=60)
    release = threading.Event()

    def meet(ctx: HostContext, args: dict[str, Any]) -> int:
        index = barrier.wait()
        release.wait(60)
        return index

    ops = [Op("fs.cwd", _echo), Op("test.meet", meet, is_async=True)]
    d = Dispatcher(HostContext(policy=None, agent_root=Path("/"), deadline=time.monotonic() + 120), ops)
    for _ in range(8):
        d.submit(b'{"op":"test.meet","args":{}}')
    assert d.call(b'{"op":"fs.cwd","args":{}}') == b'{"ok":{}}'
    release.set()
    replies = sorted(json.loads(reply)["ok"] for _, reply in _settle(d, 8))
    assert replies == list(range(8))  # every op got past the barrier: all eight ran at once
    d.close()


def test_a_tuple_of_ops_is_indexed_once_and_duplicates_still_fail():
    ops = (Op("fs.exists", _echo), *clock.OPS)
    ctx = HostContext(policy=None, agent_root=Path("/"))
    first, second = Dispatcher(ctx, ops), Dispatcher(ctx, ops)
    assert first._ops is second._ops  # the shortcut: the same table
    assert first._ops == {op.name: op for op in ops}
    assert Dispatcher(ctx, list(ops))._ops is not first._ops  # a list is indexed afresh
    for twice in ((*ops, ops[0]), [*ops, ops[0]]):
        with pytest.raises(ValueError, match=r"'fs\.exists' is defined twice"):
            Dispatcher(ctx, twice)
