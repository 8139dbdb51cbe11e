"""``hugind build --standalone``: one self-contained WASI command per agent.

The default artifact (``hugind.artifact``) is bytecode only and runs on the
engine hugind caches. A standalone build instead carries its own engine, the
HUGIND_STANDALONE variant of it (``runtimes/js/build_engine.py``), and runs
under any WASI preview 1 runtime with no hugind present: stdin in, stdout
out, like a Javy module. ``_start`` runs the agent; a script agent's result is
printed as ``hugind run`` prints it.

The agent travels as a bundle (JSON: entry, hugind version, declared env,
each module's bytecode). The build hands it to the engine's
``hugind_standalone_prepare`` and snapshots the instance
(``hugind.wasm.snapshot``), so the file holds the engine already started, the
prelude evaluated and the agent's modules read and linked: ``_start`` only
evaluates them. Only ``_start`` and ``memory`` stay exported: the file is a
WASI command, never a hugind ABI guest, so ``hugind run`` runs it as one,
under the full policy of a bare ``.wasm`` agent (every capability denied).

Without the hugind host there is no policy to ask, so every capability
(fs, shell, net, llm, mcp) throws ``Unsupported: <op> needs the hugind host``;
timers, console, ``Javy.IO`` and the agent's own modules work.
"""

from __future__ import annotations

import base64
import json
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import wasmtime

from hugind import __version__
from hugind.build import compile_graph, write_atomically
from hugind.digest import wasm_digest
from hugind.errors import EngineError, UsageError
from hugind.manifest import Agent
from hugind.sandbox.js_engine import engine_path, engine_sha256
from hugind.wasm import binary as wb
from hugind.wasm.leb128 import WasmFormatError, unsigned
from hugind.wasm.snapshot import Prepare, SnapshotError, snapshot

STANDALONE_ENGINE = "hugind-js-standalone.wasm"
META_SECTION = "hugind.standalone"
FORMAT = 1
EXPORTS = frozenset({"_start", "memory"})


@dataclass(frozen=True)
class Bundle:
    """What the standalone engine needs to run one agent (read by runtimes/js/standalone.js)."""

    entry: str
    version: str
    env: list[dict[str, object]]
    modules: dict[str, bytes]

    def to_json(self) -> bytes:
        doc = {
            "entry": self.entry,
            "version": self.version,
            "env": self.env,
            "modules": {name: base64.b64encode(code).decode("ascii") for name, code in sorted(self.modules.items())},
        }
        return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()


def check_standalone(agent: Agent) -> None:
    """Refuse, before any work, an agent that cannot run without the hugind host."""
    if agent.runtime != "js":
        raise UsageError(f"hugind build --standalone compiles JS agents; {agent.entry.name} is already WebAssembly")
    if agent.manifest.mode == "agentic":
        raise UsageError(
            f"hugind build --standalone: agent {agent.manifest.name!r} is agentic (mode: agentic); its LLM loop "
            "runs in the hugind host, so it cannot be a standalone WASI command (build it without --standalone)"
        )


def standalone_engine_path() -> Path:
    return engine_path().parent / STANDALONE_ENGINE


@lru_cache(maxsize=2)
def _engine_of(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise EngineError(
            f"the standalone JS engine is not built ({path} is missing); "
            "rebuild the engine with `python runtimes/js/build_engine.py`"
        ) from None
    # Bytecode is compiled by the engine hugind runs; it loads only into a
    # variant of that same build.
    try:
        info = json.loads((path.parent / "BUILD_INFO.json").read_text())
    except (OSError, ValueError):
        info = {}
    if info.get("sha256") != engine_sha256():
        raise EngineError(
            f"{path} is not from the same build as the JS engine hugind runs; "
            "rebuild both with `python runtimes/js/build_engine.py`"
        )
    return data


def standalone_engine() -> bytes:
    return _engine_of(standalone_engine_path())


def _prepare(bundle: bytes) -> Prepare:
    def prepare(store: wasmtime.Store, instance: wasmtime.Instance) -> None:
        exports = instance.exports(store)
        funcs = {name: exports.get(name) for name in ("_initialize", "hugind_alloc", "hugind_standalone_prepare")}
        memory = exports.get("memory")
        if not all(isinstance(f, wasmtime.Func) for f in funcs.values()) or not isinstance(memory, wasmtime.Memory):
            raise EngineError("the standalone JS engine lacks the exports a standalone build needs; rebuild it")
        funcs["_initialize"](store)
        ptr = funcs["hugind_alloc"](store, len(bundle))
        if not ptr:
            raise EngineError("the standalone JS engine could not allocate the agent's bundle")
        memory.write(store, bundle, ptr)
        status = funcs["hugind_standalone_prepare"](store, ptr, len(bundle))
        if status != 0:
            raise EngineError(f"the standalone JS engine could not load the agent (status {status})")

    return prepare


def bake(engine: bytes, bundle: bytes, meta: dict[str, object]) -> bytes:
    """The standalone engine snapshotted with ``bundle`` loaded, exporting only ``_start`` and ``memory``."""
    try:
        module = wb.parse(snapshot(engine, _prepare(bundle)))
    except (SnapshotError, WasmFormatError) as exc:
        raise EngineError(f"cannot build the standalone module: {exc}") from None
    module.put(wb.EXPORT, wb.encode_exports([e for e in wb.exports(module) if e.name in EXPORTS]))
    name = META_SECTION.encode()
    payload = unsigned(len(name)) + name + json.dumps(meta, ensure_ascii=False).encode()
    module.sections.append(wb.Section(wb.CUSTOM, payload))
    return module.to_bytes()


def standalone_meta(data: bytes) -> dict[str, object] | None:
    """The ``hugind.standalone`` section of a module, if it has one."""
    for section in wb.parse(data).sections:
        if section.id != wb.CUSTOM:
            continue
        reader = wb.Reader(section.payload)
        if reader.name() == META_SECTION:
            meta = json.loads(section.payload[reader.pos :])
            return meta if isinstance(meta, dict) else None
    return None


def build_standalone(agent: Agent) -> bytes:
    check_standalone(agent)
    engine = standalone_engine()
    graph = compile_graph(agent)
    env = [{"name": v.name, "required": v.required} for v in agent.manifest.env]
    bundle = Bundle(graph.entry, __version__, env, graph.bytecode)
    meta = {
        "format": FORMAT,
        "entry": graph.entry,
        "modules": sorted(graph.bytecode),
        "hugind": __version__,
        "engine_sha256": engine_sha256(),
    }
    return bake(engine, bundle.to_json(), meta)


def build_and_write(agent: Agent, output: Path) -> str:
    """``hugind build --standalone``: write the module, report it on stderr, return its digest.

    The digest is the one ``hugind check OUT.wasm`` prints and ``--expect`` pins.
    """
    data = build_standalone(agent)
    write_atomically(output, data)
    meta = standalone_meta(data) or {}
    modules = meta.get("modules")
    names = ", ".join(modules) if isinstance(modules, list) else "?"
    sys.stderr.write(f"wrote {output} ({len(data)} bytes; standalone WASI command; modules: {names})\n")
    return wasm_digest(None, data)
