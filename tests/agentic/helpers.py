"""Real tools for loop tests: they read files, sleep, and record what they were asked."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from hugind.agentic import FunctionExecutor, ParsedCall, ToolResult, ToolSpec

READ_FILE = ToolSpec(
    "read_file",
    "Read the full contents of a file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
RUN = ToolSpec(
    "run",
    "Run a shell command and return its output.",
    {
        "type": "object",
        "properties": {"command": {"type": "string"}, "timeout": {"type": "integer"}},
        "required": ["command"],
    },
)
SLEEP = ToolSpec(
    "sleep",
    "Wait, then answer with a tag.",
    {"type": "object", "properties": {"tag": {"type": "string"}, "seconds": {"type": "number"}}},
)
TOOLS = [READ_FILE, RUN, SLEEP]


class RecordingExecutor(FunctionExecutor):
    """Runs real Python tools; remembers every batch it was given."""

    def __init__(self, barrier_parties: int = 0) -> None:
        self.batches: list[list[ParsedCall]] = []
        self.barrier = threading.Barrier(barrier_parties, timeout=10) if barrier_parties else None
        super().__init__({"read_file": self.read_file, "run": self.run, "sleep": self.sleep})

    def execute(self, calls: list[ParsedCall]) -> list[ToolResult]:
        self.batches.append(list(calls))
        return super().execute(calls)

    @property
    def calls(self) -> list[ParsedCall]:
        return [c for batch in self.batches for c in batch]

    @staticmethod
    def read_file(args: dict[str, Any]) -> str:
        return Path(args["path"]).read_text()

    @staticmethod
    def run(args: dict[str, Any]) -> str:
        if args["command"] == "fail":
            raise RuntimeError("command failed")
        return f"ran {args['command']}"

    def sleep(self, args: dict[str, Any]) -> str:
        if self.barrier is not None:
            # Every call of the batch must be running at once to get past this.
            self.barrier.wait()
        time.sleep(float(args.get("seconds", 0)))
        return f"slept {args.get('tag', '')}"
