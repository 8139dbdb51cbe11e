"""Server-sent events: turn response lines into (event, data) records.

Follows the SSE framing rules that matter for chat streams: ``data:`` lines
(with or without the space) accumulate until a blank line, several ``data:``
lines join with newlines, ``event:`` names the record, ``:`` starts a comment.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class SSEEvent:
    data: str
    event: str = "message"


def iter_sse(lines: Iterable[str]) -> Iterator[SSEEvent]:
    data: list[str] = []
    event = "message"
    for raw in lines:
        line = raw.rstrip("\r\n")
        if line.startswith("data: "):  # the common case first
            data.append(line[6:])
            continue
        if not line:
            if data:
                yield SSEEvent("\n".join(data), event)
            data, event = [], "message"
            continue
        if line.startswith(":"):
            continue
        if line.startswith("{"):
            # Some servers send bare JSON lines (NDJSON) instead of SSE records.
            yield SSEEvent(line, event)
            continue
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            data.append(value)
        elif field == "event":
            event = value or "message"
    if data:
        yield SSEEvent("\n".join(data), event)
