"""``hugind build``: compile a JS agent to a bytecode artifact, inside wasmtime.

The engine itself compiles the sources (no native JS toolchain). Imports are
discovered by letting the engine resolve the entry's module graph through the
host loader, which applies the same import rules as a run and records each
module it serves; no agent code is executed.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hugind import artifact
from hugind.errors import AgentFailed, HostCallError, UsageError
from hugind.host import modules
from hugind.host.dispatch import Dispatcher
from hugind.host.registry import HostContext, Op
from hugind.manifest import MANIFEST_NAME, MANIFEST_TEXT, Agent
from hugind.sandbox.driver import GuestDriver
from hugind.sandbox.engine import EngineConfig
from hugind.sandbox.instance import GuestInstance, GuestIO, GuestLimits
from hugind.sandbox.js_engine import engine_module, engine_sha256

BUILD_TIMEOUT_S = 120.0
Progress = Callable[[str], None]


def _quiet(_line: str) -> None:
    pass


class _RecordingSource(modules.ModuleSource):
    """Serves sources like a run does, remembering each module it served."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.served: dict[str, str] = {}

    def load(self, name: str) -> dict[str, Any]:
        reply = super().load(name)
        self.served[name] = reply["source"]
        return reply


@dataclass(frozen=True)
class CompiledGraph:
    """An entry's static import graph: each module's source as served, and its bytecode."""

    entry: str
    sources: dict[str, str]
    bytecode: dict[str, bytes]


def compile_graph(agent: Agent, progress: Progress = _quiet) -> CompiledGraph:
    """Compile the entry and every module it imports, reading each file once and running none.
    ``progress`` hears each step (``hugind build`` prints them on a terminal's stderr)."""
    if agent.runtime == "python":
        raise UsageError(f"hugind build compiles JS agents; {agent.entry.name} is a Python agent, run as it is")
    if agent.runtime != "js":
        raise UsageError(f"hugind build compiles JS agents; {agent.entry.name} is already WebAssembly")
    source = _RecordingSource(agent.root)
    compiled: dict[str, bytes | dict[str, str]] = {}

    def record(_ctx: HostContext, args: dict[str, Any]) -> None:
        if "error" in args:
            compiled[str(args.get("name"))] = args["error"]
        else:
            compiled[str(args.get("name"))] = bytes(args.get("bytecode") or [])

    ctx = HostContext(policy=None, agent_root=agent.root, services={"modules": source})
    dispatcher = Dispatcher(ctx, [*modules.OPS, Op("build.module", record)])
    sink: list[bytes] = []
    io = GuestIO(stdout=sink.append, stderr=sink.append)
    config = EngineConfig()
    progress("loading the JS engine (compiled for this machine on first use, then cached)")
    instance = GuestInstance(engine_module(config), dispatcher, io, GuestLimits(), config)
    driver = GuestDriver(instance, dispatcher, time.monotonic() + BUILD_TIMEOUT_S)
    try:
        if instance.has_export("_initialize"):
            driver.enter("_initialize")
        entry = source.resolve(modules.PRELUDE_NAME, "./" + agent.entry.relative_to(agent.root).as_posix())
        entry_source = source.load(entry)["source"]
        progress(f"compiling {entry} and its imports to bytecode")
        driver.send("hugind_js_compile", {"name": entry, "source": entry_source, "resolve": True})
        _raise_if_failed(compiled, entry)
        for name, text in sorted(source.served.items()):
            if name != entry:
                driver.send("hugind_js_compile", {"name": name, "source": text, "resolve": False})
                _raise_if_failed(compiled, name)
    except HostCallError as err:
        raise AgentFailed(err.kind, err.message) from None
    finally:
        dispatcher.close()
    bytecode = {name: code for name, code in compiled.items() if isinstance(code, bytes)}
    return CompiledGraph(entry, dict(source.served), bytecode)


def manifest_text_of(agent: Agent) -> str | None:
    """The agent.yaml text its manifest was parsed from; None for a bare file (no manifest)."""
    if not agent.manifest.source.endswith(MANIFEST_NAME):
        return None
    text = agent.extra.get(MANIFEST_TEXT)
    # An Agent made by an embedder may lack the text load_agent keeps: read it then.
    return text if isinstance(text, str) else (agent.root / MANIFEST_NAME).read_text(encoding="utf-8")


def to_artifact(agent: Agent, graph: CompiledGraph) -> artifact.Artifact:
    return artifact.Artifact(engine_sha256(), graph.entry, manifest_text_of(agent), graph.bytecode)


def build_artifact(agent: Agent, progress: Progress = _quiet) -> bytes:
    graph = compile_graph(agent, progress)
    progress(f"compiled {len(graph.bytecode)} module{'s' if len(graph.bytecode) != 1 else ''}; writing the artifact")
    return artifact.encode(to_artifact(agent, graph))


def _raise_if_failed(compiled: dict[str, Any], name: str) -> None:
    result = compiled.get(name)
    if result is None:
        raise AgentFailed("BuildError", f"the engine did not report a result for '{name}'")
    if isinstance(result, dict):
        raise AgentFailed(result.get("name", "Error"), result.get("message", ""), result.get("stack", ""))


def write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 is for secrets; an artifact is not one
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def describe(data: bytes) -> dict[str, Any]:
    art = artifact.decode(data, "artifact")
    modules = {k: len(v) for k, v in art.modules.items()}
    return {"entry": art.entry, "modules": modules, "bytes": len(data), "digest": art.digest}
