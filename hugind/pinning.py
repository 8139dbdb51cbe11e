"""Pinning an agent to a digest: what ``hugind check`` prints and ``--expect`` verifies.

The digest names what would run (``hugind.digest`` defines the encoding):

* a built artifact: its embedded digest, already recomputed and verified by
  ``hugind.artifact.decode`` when the file was loaded;
* a JS agent (folder or single ``.js``): the agent.yaml text and the source of
  every module in the entry's static import graph, found by the engine's own
  resolver exactly as ``hugind build`` finds it;
* a raw ``.wasm`` agent: the module bytes and, for a folder, the agent.yaml text;
* a Python agent: the agent.yaml text, the entry's name and every ``.py`` file of
  its folder (the entry runs from the bytes hashed; other modules are read when imported).

``pin`` also returns the agent sealed to that content: a pinned JS agent runs
the bytecode compiled from the very sources that were hashed (like an artifact,
it cannot import a module outside its graph), and a pinned wasm agent runs the
bytes that were hashed. Nothing is re-read from disk after the check, so a file
swapped between the check and the run cannot slip in.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hugind.build import compile_graph, manifest_text_of, to_artifact
from hugind.digest import parse_expected, python_digest, source_digest, wasm_digest
from hugind.errors import AgentFailed, DigestMismatch
from hugind.jscheck import JsCompileError, describe
from hugind.manifest import Agent
from hugind.sandbox.raw_wasm import PINNED_WASM, read_agent_module

_DIGEST = "pinned_digest"  # Agent.extra key: set on a sealed agent, so pinning it again gives the same digest


@dataclass(frozen=True)
class Pinned:
    agent: Agent  # sealed to exactly the content the digest covers
    digest: str  # sha256:<hex>


def pin(agent: Agent) -> Pinned:
    if isinstance(agent.extra.get(_DIGEST), str):
        return Pinned(agent, agent.extra[_DIGEST])
    art = agent.extra.get("artifact")
    if art is not None:
        return Pinned(agent, art.digest)
    manifest_text = manifest_text_of(agent)
    if agent.runtime == "wasm":
        data = read_agent_module(agent.entry)
        digest = wasm_digest(manifest_text, data)
        return Pinned(replace(agent, extra={**agent.extra, PINNED_WASM: data, _DIGEST: digest}), digest)
    if agent.runtime == "python":  # the entry runs from the bytes hashed (py_runtime.PINNED_SOURCE)
        from hugind.sandbox.py_runtime import PINNED_SOURCE, pin_sources
        from hugind.sandbox.py_sources import PINNED_SOURCES

        entry, sources = pin_sources(agent)
        digest = python_digest(entry, manifest_text, sources)
        # Every module imports from these bytes too (py_sources.py), not from the folder.
        entry_text = sources[entry].decode("utf-8")
        sealed = {**agent.extra, PINNED_SOURCE: entry_text, PINNED_SOURCES: sources, _DIGEST: digest}
        return Pinned(replace(agent, extra=sealed), digest)
    graph = compile_graph(agent)
    sources = {name: text.encode("utf-8") for name, text in graph.sources.items()}
    digest = source_digest(graph.entry, manifest_text, sources)
    return Pinned(replace(agent, extra={**agent.extra, "artifact": to_artifact(agent, graph), _DIGEST: digest}), digest)


def _pin_expected(agent: Agent, expected: str, source: str) -> Pinned:
    want = parse_expected(expected)  # a malformed pin fails before any work
    pinned = pin(agent)
    if pinned.digest == want:
        return pinned
    # A JS folder or file also answers to the digest `hugind build` prints for it: the
    # sealed agent runs exactly the artifact that digest covers (bytecode, manifest, engine).
    built = pinned.agent.extra.get("artifact") if agent.extra.get("artifact") is None else None
    if built is not None and built.digest == want:
        return pinned
    also = f" (its build's: {built.digest})" if built is not None else ""
    raise DigestMismatch(
        f"{source}: digest {pinned.digest}{also} does not match --expect {want}; "
        "the agent is not the one that was pinned, so nothing was run"
    )


def verify(agent: Agent, expected: str, source: str) -> Agent:
    """The agent sealed to its pinned content, or DigestMismatch (exit 2) before any agent code runs."""
    return _pin_expected(agent, expected, source).agent


def digest_for_check(agent: Agent, expected: str | None, source: str) -> str:
    """The agent's digest (checked against ``expected`` when given). Pinning a JS agent
    compiles its graph, so this is also `hugind check`'s compile check: JS that does not
    compile is a JsCompileError (exit 2, ``file:line:column``), and has no digest."""
    try:
        return (pin(agent) if expected is None else _pin_expected(agent, expected, source)).digest
    except AgentFailed as err:
        raise JsCompileError(describe(agent, err), err.name) from None
