"""``HUGIND_TRACE=1``: a human-readable account of the loop on a stream.

Prints the tool count, the full system and user prompts, each turn (message
count, status, timing, content preview, tool-call count) and each tool
execution (name, arguments, duration, result length).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Sequence
from typing import Any, TextIO

PREFIX = "[hugind trace]"
PREVIEW = 200
_TRUE = {"1", "true", "yes", "on"}


class Tracer:
    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.stream is not None

    def line(self, text: str) -> None:
        if self.stream is None:
            return
        with self._lock:
            for part in text.splitlines() or [""]:
                self.stream.write(f"{PREFIX} {part}\n")
            self.stream.flush()

    def setup(self, tool_names: Sequence[str], system_prompt: str, user_prompt: str, tool_format: str) -> None:
        if not self.enabled:
            return
        self.line(f"tools registered: {len(tool_names)} ({', '.join(tool_names) or 'none'}); format={tool_format}")
        self.line(f"system prompt ({len(system_prompt)} chars):")
        self.line(system_prompt)
        self.line(f"user prompt ({len(user_prompt)} chars):")
        self.line(user_prompt)

    def turn(self, turn: int, messages: int, status: str, elapsed_s: float, content: str, calls: int) -> None:
        if not self.enabled:
            return
        self.line(
            f"turn {turn}: {messages} messages -> {status} in {elapsed_s * 1000:.0f} ms, "
            f"{calls} tool call(s); content: {preview(content)}"
        )

    def tool(self, name: str, args: Any, duration_s: float, result_chars: int, ok: bool) -> None:
        if not self.enabled:
            return
        try:
            shown = json.dumps(args, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            shown = repr(args)
        state = "ok" if ok else "error"
        self.line(f"  tool {name}({clip(shown)}) {state} in {duration_s * 1000:.0f} ms, {result_chars} chars")


def clip(text: str, limit: int = PREVIEW) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "..."


def preview(text: str, limit: int = PREVIEW) -> str:
    """One line, clipped, quoted (so empty and whitespace-only content show)."""
    return json.dumps(clip(text, limit), ensure_ascii=False)


def make_tracer(trace: bool | TextIO | None, env: dict[str, str] | None = None) -> Tracer:
    """True -> stderr; a stream -> that stream; False -> off; None -> ``HUGIND_TRACE``."""
    if trace is None:
        value = (env if env is not None else os.environ).get("HUGIND_TRACE", "")
        return Tracer(sys.stderr if value.strip().lower() in _TRUE else None)
    if trace is True:
        return Tracer(sys.stderr)
    if trace is False:
        return Tracer(None)
    return Tracer(trace)
