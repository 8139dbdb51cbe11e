"""The dispatcher seam: every guest request is written down (record) or answered from the record (replay).

Recording keeps each synchronous call with its reply, each async submit with
its id, and each completion in the order the driver handed it to the guest
(threads finish in any order; the guest sees one). Replaying compares each
request with the recorded one (op and arguments, after the same redaction)
and answers from the record without running the op's handler. The guest's
own reports and module loads (``agent.*``, ``tool.*``, ``module.*``) still
run, because they are the run's state, not the world's; they are compared
all the same.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from hugind.host.dispatch import Dispatcher
from hugind.host.registry import HostContext, Op
from hugind.replay.format import CALL, DELIVER, SUBMIT, canonical
from hugind.replay.scrub import redact_request
from hugind.replay.tape import Player, Recorder, describe

LIVE_PREFIXES = ("agent.", "tool.", "module.")
_RAW_SHOWN = 4096


def request_view(raw: bytes) -> dict[str, Any]:
    """A request as recorded and compared: op and redacted args, or the raw text of a malformed one."""
    try:
        req = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        req = None
    if not isinstance(req, dict) or not isinstance(req.get("op"), str):
        return {"raw": raw[:_RAW_SHOWN].decode("utf-8", "replace")}
    return {"op": req["op"], "args": redact_request(req.get("args"))}


def _text(reply: bytes) -> str:
    return reply.decode("utf-8", "replace")


def _is_final(reply: bytes) -> bool:
    return not reply.startswith(b'{"progress"')


class RecordingDispatcher(Dispatcher):
    batches_completions = False  # each delivery is written down where the guest saw it

    def __init__(self, ctx: HostContext, ops: Iterable[Op], tape: Recorder) -> None:
        super().__init__(ctx, ops)
        self.tape = tape

    def call(self, raw: bytes) -> bytes:
        reply = super().call(raw)
        self.tape.append({"k": CALL, "req": request_view(raw), "reply": _text(reply)}, sync=True)
        return reply

    def submit(self, raw: bytes) -> int:
        op_id = super().submit(raw)
        self.tape.append({"k": SUBMIT, "req": request_view(raw), "id": op_id})
        return op_id

    def next_completion(self, timeout: float) -> tuple[int, bytes] | None:
        item = super().next_completion(timeout)
        if item is not None:
            op_id, reply = item
            self.tape.append({"k": DELIVER, "id": op_id, "reply": _text(reply)}, sync=_is_final(reply))
        return item


class ReplayDispatcher(Dispatcher):
    batches_completions = False

    def __init__(self, ctx: HostContext, ops: Iterable[Op], player: Player) -> None:
        super().__init__(ctx, ops)
        self.player = player
        self._waiting = 0  # submitted ops whose final reply has not been delivered

    def _take(self, raw: bytes, kind: str) -> tuple[dict[str, Any], dict[str, Any]]:
        view = request_view(raw)
        key = self.player.scrub.text(canonical(view))
        event = self.player.take("guest", (kind,), describe({"req": view}), lambda e: canonical(e.get("req")) == key)
        return view, event

    def call(self, raw: bytes) -> bytes:
        view, event = self._take(raw, CALL)
        if str(view.get("op", "")).startswith(LIVE_PREFIXES):
            return super().call(raw)
        return self.player.scrub.restore(str(event.get("reply", ""))).encode()

    def submit(self, raw: bytes) -> int:
        _, event = self._take(raw, SUBMIT)
        self._waiting += 1
        return int(event["id"])

    @property
    def pending(self) -> int:
        return self._waiting

    def next_completion(self, timeout: float) -> tuple[int, bytes] | None:
        event = self.player.take("guest", (DELIVER,), describe({"k": DELIVER}), lambda e: True)
        reply = self.player.scrub.restore(str(event.get("reply", ""))).encode()
        if _is_final(reply):
            self._waiting -= 1
        return int(event["id"]), reply


def taped_dispatcher(ctx: HostContext, ops: Iterable[Op], tape: Recorder | Player) -> Dispatcher:
    if isinstance(tape, Player):
        return ReplayDispatcher(ctx, ops, tape)
    return RecordingDispatcher(ctx, ops, tape)
