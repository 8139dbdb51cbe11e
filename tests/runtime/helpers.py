"""Run an agent in-process and capture what it wrote."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hugind.manifest import load_agent
from hugind.run import RunOptions, RunResult, run_agent


@dataclass
class Captured:
    result: RunResult
    stdout: str
    stderr: str


@dataclass
class Sinks:
    out: list[bytes] = field(default_factory=list)
    err: list[bytes] = field(default_factory=list)


def run_captured(agent_dir: Path, *args: str, env: dict[str, str] | None = None, **options: Any) -> Captured:
    sinks = Sinks()
    opts = RunOptions(
        args=list(args),
        stdout=sinks.out.append,
        stderr=sinks.err.append,
        host_env=env or {},
        **options,
    )
    result = run_agent(load_agent(agent_dir), opts)
    return Captured(result, b"".join(sinks.out).decode(), b"".join(sinks.err).decode())
