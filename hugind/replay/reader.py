"""Reading a record back: every line parsed and its place in the chain checked.

A record that fails any check is refused as a whole (``RecordInvalid``, one
line naming the first bad line): a line cut short, a line that is not JSON,
a ``seq`` out of order, a ``prev`` that is not the hash of the line before,
a header of another format. A record whose chain is whole but which has no
closing line is a run that did not finish (a crash, a kill): it is returned
with ``complete=False``, for replay up to where it ends.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hugind.errors import RecordInvalid
from hugind.replay.format import END, FORMAT_VERSION, GENESIS, MAGIC, line_hash
from hugind.replay.schema import check_line
from hugind.userfile import DATA_LIMIT, read_user_file


@dataclass
class Record:
    path: Path
    header: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)  # every line between header and end
    end: dict[str, Any] | None = None
    digest: str = ""  # sha256:<hex> of the file's bytes

    @property
    def complete(self) -> bool:
        return self.end is not None


def read_record(path: Path) -> Record:
    import hashlib

    name = str(path)
    data = read_user_file(path, "record", limit=DATA_LIMIT, error=RecordInvalid)
    if not data:
        raise RecordInvalid(f"{name} is empty: not a hugind record")
    if not data.endswith(b"\n"):
        count = data.count(b"\n")
        raise RecordInvalid(
            f"{name} is truncated: line {count + 1} is cut short (the file does not end with a newline)"
        )
    lines = data[:-1].split(b"\n")
    prev = GENESIS
    parsed: list[dict[str, Any]] = []
    for seq, line in enumerate(lines):
        try:
            obj = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            raise RecordInvalid(f"{name}: line {seq + 1} is not valid JSON (the record is damaged)") from None
        if not isinstance(obj, dict):
            raise RecordInvalid(f"{name}: line {seq + 1} is not a JSON object (the record is damaged)")
        if seq == 0 and (obj.get("magic") != MAGIC):
            raise RecordInvalid(f"{name} is not a hugind record (no '{MAGIC}' header)")
        if seq == 0 and obj.get("format") != FORMAT_VERSION:
            raise RecordInvalid(
                f"{name}: record format {obj.get('format')!r} is not supported (this hugind reads {FORMAT_VERSION})"
            )
        if obj.get("seq") != seq:
            raise RecordInvalid(
                f"{name}: line {seq + 1} holds seq {obj.get('seq')!r}, not {seq} (lines removed or reordered)"
            )
        if obj.get("prev") != prev:
            raise RecordInvalid(
                f"{name}: line {seq + 1} does not follow line {seq} (hash chain broken: the record was edited)"
            )
        check_line(obj, seq, name)
        if parsed and parsed[-1].get("k") == END:
            raise RecordInvalid(f"{name}: line {seq + 1} comes after the closing line (the record was edited)")
        prev = line_hash(line)
        parsed.append(obj)
    record = Record(path, parsed[0], digest="sha256:" + hashlib.sha256(data).hexdigest())
    body = parsed[1:]
    if body and body[-1].get("k") == END:
        record.end = body.pop()
        if record.end.get("events") != len(body):
            raise RecordInvalid(f"{name}: the closing line counts {record.end.get('events')!r} events, not {len(body)}")
    record.events = body
    return record
