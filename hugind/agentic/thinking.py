"""Remove ``<think>`` reasoning from model output (history keeps the raw text).

Handled: closed blocks anywhere, an unclosed block at the end (output cut
off while thinking), and a leading orphan ``</think>`` (templates such as
Qwen3's and DeepSeek-R1's put ``<think>`` in the prompt, so the output starts
with reasoning and only the closing tag appears). ``<thinking>`` is accepted
as a synonym. One linear pass over the tags; no backtracking.
"""

from __future__ import annotations

import re

_TAG = re.compile(r"<(/?)(think|thinking)\s*>", re.IGNORECASE)


def split_thinking(text: str) -> tuple[str, str]:
    """(visible text, reasoning) of a model's output."""
    if not text or "think" not in text.lower():
        return (text or "").strip(), ""
    visible: list[str] = []
    thoughts: list[str] = []
    pos = 0
    open_at: int | None = None
    for match in _TAG.finditer(text):
        closing = match.group(1) == "/"
        if open_at is None:
            if closing:
                # Orphan close: everything before it was reasoning.
                thoughts.append("".join(visible) + text[pos : match.start()])
                visible = []
                pos = match.end()
            else:
                visible.append(text[pos : match.start()])
                open_at = match.end()
        elif closing:
            thoughts.append(text[open_at : match.start()])
            pos = match.end()
            open_at = None
    if open_at is None:
        visible.append(text[pos:])
    else:
        thoughts.append(text[open_at:])
    reasoning = "\n".join(t.strip() for t in thoughts if t.strip())
    return "".join(visible).strip(), reasoning


def strip_thinking(text: str) -> str:
    return split_thinking(text)[0]
