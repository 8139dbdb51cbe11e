"""``hugind build --standalone``: one self-contained WASI command per agent.

The default artifact (``hugind.artifact``) is bytecode only and runs on the
engine hugind caches. A standalone build instead carries its own engine, the
HUGIND_STANDALONE variant of it (``runtimes/js/build_engine.py``), and runs
under any WASI preview 1 runtime with no hugind present: stdin in, stdout
out, like a Javy module. ``_start`` runs the agent; a script agent's result is
printed as ``hugind run`` prints it.

The agent travels as a bundle (JSON: entry, hugind version, declared env,
each module's bytecode) that the engine reads at ``_start``. Here it is placed
by a data segment in pages added past the engine's linked memory (the
engine's allocator only takes memory from ``memory.grow``, so nothing else
ever lives there), and its address and length are written into the slot the
engine exports. Only ``_start`` and ``memory`` stay exported: the file is a
WASI command, never a hugind ABI guest, so ``hugind run`` runs it as one, under
the full policy of a bare ``.wasm`` agent (every capability denied).

Without the hugind host there is no policy to ask, so every capability
(fs, shell, net, llm, mcp) throws ``Unsupported: <op> needs the hugind host``;
timers, console, ``Javy.IO`` and the agent's own modules work.
"""

from __future__ import annotations

import base64
import json
import struct
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
from hugind.sandbox.engine import EngineConfig, get_engine, load_module
from hugind.sandbox.js_engine import engine_path, engine_sha256
from hugind.wasm_sections import (
    PAGE,
    add_custom,
    append_data,
    custom_payload,
    grow_memory,
    keep_exports,
    read_sections,
    write_module,
)

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


@lru_cache(maxsize=2)
def _payload_slot(engine: bytes) -> int:
    """The address where the engine looks for the bundle's (address, length)."""
    config = EngineConfig()
    module = load_module(engine, config)
    store = wasmtime.Store(get_engine(config))
    store.set_epoch_deadline(1 << 30)  # the engine has epoch interruption on; this call is tiny
    store.set_wasi(wasmtime.WasiConfig())
    linker = wasmtime.Linker(get_engine(config))
    linker.define_wasi()
    instance = linker.instantiate(store, module)
    slot = instance.exports(store)["hugind_standalone_slot"]
    assert isinstance(slot, wasmtime.Func)
    return int(slot(store)) & 0xFFFFFFFF


def embed(engine: bytes, bundle: bytes, meta: dict[str, object]) -> bytes:
    """The standalone engine with ``bundle`` built in, exporting only ``_start`` and ``memory``."""
    slot = _payload_slot(engine)
    sections = read_sections(engine)
    pages = -(-len(bundle) // PAGE)
    address = grow_memory(sections, pages) * PAGE
    append_data(sections, [(address, bundle), (slot, struct.pack("<II", address, len(bundle)))])
    keep_exports(sections, set(EXPORTS))
    add_custom(sections, META_SECTION, json.dumps(meta, ensure_ascii=False).encode())
    return write_module(sections)


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
    return embed(engine, bundle.to_json(), meta)


def build_and_write(agent: Agent, output: Path) -> str:
    """``hugind build --standalone``: write the module, report it on stderr, return its digest.

    The digest is the one ``hugind check OUT.wasm`` prints and ``--expect`` pins.
    """
    data = build_standalone(agent)
    write_atomically(output, data)
    meta = json.loads(custom_payload(data, META_SECTION) or b"{}")
    names = ", ".join(meta.get("modules", []))
    sys.stderr.write(f"wrote {output} ({len(data)} bytes; standalone WASI command; modules: {names})\n")
    return wasm_digest(None, data)
