"""A forged record (every field changed, the hash chain recomputed, as anyone can) is
either refused when read, naming the line and field, or replayed to an ordinary
outcome: never an internal error, a traceback or a hang."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from hugind.errors import ExitCode, RecordInvalid
from hugind.replay.reader import read_record
from hugind.replay.schema import check_line
from tests.replay.helpers import lines, record_run, replay
from tests.replay.test_script_replay import NONDETERMINISTIC

HOSTILE: list[Any] = [None, -1, 1 << 70, 1.5, "x", "", [], {}, {"a": {"b": [1]}}, True, "A" * 3000]


def _write(objs: list[dict[str, Any]], path: Path) -> None:
    prev, out = "0" * 64, []
    for seq, obj in enumerate(objs):
        line = json.dumps({**obj, "seq": seq, "prev": prev}, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        out.append(line.encode())
        prev = hashlib.sha256(out[-1]).hexdigest()
    path.write_bytes(b"\n".join(out) + b"\n")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[list[dict[str, Any]], Path]:
    from tests.conftest import write_agent

    root = tmp_path_factory.mktemp("hostile")
    agent = write_agent(root / "agent", NONDETERMINISTIC, {"name": "hostile", "entry_point": "main.js"})
    record = root / "run.hgrec"
    assert record_run(agent, record, stdin="line\n").code == 0
    return lines(record), root


def test_forged_fields_are_refused_or_replayed_to_an_ordinary_end(recorded, tmp_path):
    original, _ = recorded
    refused = replayed = 0
    forged = tmp_path / "forged.hgrec"
    survivors: list[list[dict[str, Any]]] = []
    for index, line in enumerate(original):
        for key in [k for k in line if k not in ("seq", "prev", "magic", "format")]:
            for value in HOSTILE:
                objs = [dict(item) for item in original]
                objs[index][key] = value
                _write(objs, forged)
                try:
                    read_record(forged)
                except RecordInvalid as err:
                    assert str(forged) in err.message and "\n" not in err.message
                    refused += 1
                    continue
                survivors.append(objs)
    assert refused > 100  # the schema does refuse: the loop is not vacuous
    # What the schema lets through is well typed; replay it, a few of each kind.
    for objs in survivors[:: max(1, len(survivors) // 25)]:
        _write(objs, forged)
        result = replay(forged, "--allow-changed", stdin="line\n")
        replayed += 1
        assert result.code not in (ExitCode.INTERNAL,) and result.code >= 0, result.stderr
        assert "Traceback" not in result.stderr
    assert replayed >= 10


@pytest.mark.parametrize(
    ("event", "fragment"),
    [
        ({"k": "chat", "req": {"digest": "sha256:0"}}, "either 'result' or 'error'"),
        ({"k": "chat", "req": {"digest": "d"}, "result": {"tool_calls": [{"id": 1}]}}, "'result'"),
        ({"k": "chat", "req": {"digest": "d"}, "result": {"usage": {"prompt_tokens": -1}}}, "'result'"),
        ({"k": "random", "n": 4, "hex": "00"}, "'n' random bytes"),
        ({"k": "read", "fd": 0, "b64": "not base64!"}, "'b64'"),
        ({"k": "audit", "line": "[1]"}, "'line'"),
        ({"k": "mcp.call", "req": {}, "error": {"kind": 3}}, "'error'"),
        ({"k": "launch"}, "unknown event kind"),
    ],
)
def test_the_loop_and_wasi_events_are_checked_too(event, fragment):
    with pytest.raises(RecordInvalid, match=fragment):
        check_line(event, 3, "r.hgrec")


def test_a_well_formed_chat_answer_passes():
    check_line(
        {
            "k": "chat",
            "req": {"digest": "sha256:00", "last": {"role": "user"}},
            "result": {"content": "hi", "tool_calls": [{"id": "c1", "name": "t", "arguments_json": "{}"}]},
            "tokens": ["h", "i"],
        },
        3,
        "r.hgrec",
    )
