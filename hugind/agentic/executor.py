"""An executor over Python callables, run concurrently on a thread pool.

The sandboxed executor (JS tools inside wasm) lives with the run
orchestration; this one serves host-side tools and tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hugind.agentic.calls import ParsedCall
from hugind.agentic.tools import ToolResult

ToolFunction = Callable[[dict[str, Any]], Any]


class FunctionExecutor:
    def __init__(self, functions: Mapping[str, ToolFunction], *, max_workers: int = 8) -> None:
        self.functions = dict(functions)
        self.max_workers = max(1, max_workers)

    def execute(self, calls: list[ParsedCall]) -> list[ToolResult]:
        if len(calls) <= 1:
            return [self._run(call) for call in calls]
        with ThreadPoolExecutor(max_workers=min(self.max_workers, len(calls))) as pool:
            return list(pool.map(self._run, calls))

    def _run(self, call: ParsedCall) -> ToolResult:
        started = time.monotonic()
        fn = self.functions.get(call.name)
        if fn is None:
            return ToolResult(f"Error: no such tool '{call.name}'", True, 0.0)
        try:
            value = fn(dict(call.args))
        except Exception as exc:  # a tool's failure is reported to the model, not raised
            return ToolResult(f"Error: {type(exc).__name__}: {exc}", True, time.monotonic() - started)
        text = value if isinstance(value, str) else ("" if value is None else str(value))
        return ToolResult(text, False, time.monotonic() - started)
