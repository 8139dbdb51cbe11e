"""Does a JS agent compile? ``hugind check`` asks before anything runs, and
``hugind run`` asks after a ``SyntaxError`` to tell bad input (exit 2) from an
agent that threw one at run time (``JSON.parse``; exit 1).

The engine compiles the entry and its static import graph exactly as
``hugind build`` does (``hugind.build.build_artifact``): inside wasmtime,
through the host loader, without running any agent code.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from hugind.errors import AgentFailed, HugindError, MemoryExhausted, UsageError
from hugind.manifest import Agent

# QuickJS puts a compile error's position on the first line of its stack: "    at lib.js:2:9".
_POSITION = re.compile(r"^\s*at (?P<file>.+?):(?P<line>\d+):(?P<col>\d+)\s*$")


class JsCompileError(UsageError):
    """The agent's JS does not compile (or an import cannot be loaded): bad input."""

    def __init__(self, message: str, js_name: str) -> None:
        super().__init__(message)
        self.js_name = js_name


def compile_error(agent: Agent) -> JsCompileError | None:
    """The first compile or import error in the agent's module graph, or None.

    Artifacts (already compiled) and raw ``.wasm`` agents have nothing to check.
    """
    if agent.runtime != "js" or agent.extra.get("artifact") is not None:
        return None
    from hugind.build import build_artifact  # the compile path of `hugind build`

    try:
        build_artifact(agent)
    except AgentFailed as err:
        return JsCompileError(describe(agent, err), err.name)
    return None


def describe(agent: Agent, err: AgentFailed) -> str:
    """``path:line:column: Name: message`` when the engine gave a position."""
    first = err.stack.strip().splitlines()[0] if err.stack.strip() else ""
    match = _POSITION.match(first)
    text = f"{err.name}: {err.js_message}" if err.js_message else err.name
    if match is None:
        return text
    return f"{_shown(agent.root / match['file'])}:{match['line']}:{match['col']}: {text}"


def _shown(path: Path) -> str:
    """Relative to the working directory when inside it, as compilers print paths."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)
    return str(path) if rel.startswith("..") else rel


def reclassify(agent: Agent, err: AgentFailed) -> AgentFailed | JsCompileError | MemoryExhausted:
    """A SyntaxError that is really the agent's source failing to compile becomes
    a usage error; one thrown by running code (JSON.parse, eval) stays the agent's.
    The engine's out-of-memory error, uncaught, is the memory limit hit (exit 4)."""
    if err.name == "InternalError" and err.js_message == "out of memory":
        return MemoryExhausted(err)
    if err.name != "SyntaxError":
        return err
    try:
        found = compile_error(agent)
    except HugindError:  # the check itself failed: the original error is the better report
        return err
    return found if found is not None and found.js_name == "SyntaxError" else err
