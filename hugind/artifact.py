"""The ``hugind build`` artifact: a bytecode-only WebAssembly module.

An artifact is a valid ``.wasm`` file made only of custom sections:

* ``hugind.artifact`` (JSON): ``{"format": 1, "engine_sha256", "entry",
  "manifest" (the agent.yaml text, or null), "modules": [names]}``;
* ``hugind.bc/<name>`` for each module: QuickJS bytecode.

It carries no engine: running it links the bytecode to the one cached,
already-compiled JS engine, so many agents share one Cranelift compilation
(like Javy's dynamic mode). QuickJS bytecode is tied to the engine build, so
an artifact runs only on the engine whose hash it names.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from hugind.errors import InvalidModule

FORMAT = 1
META_SECTION = "hugind.artifact"
BYTECODE_PREFIX = "hugind.bc/"
_HEADER = b"\0asm\x01\0\0\0"


@dataclass(frozen=True)
class Artifact:
    engine_sha256: str
    entry: str
    manifest_text: str | None
    modules: dict[str, bytes]


def _leb(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _read_leb(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 35:
            raise ValueError("truncated LEB128")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def encode(artifact: Artifact) -> bytes:
    meta = {
        "format": FORMAT,
        "engine_sha256": artifact.engine_sha256,
        "entry": artifact.entry,
        "manifest": artifact.manifest_text,
        "modules": sorted(artifact.modules),
    }
    sections = [(META_SECTION, json.dumps(meta, ensure_ascii=False).encode())]
    sections += [(BYTECODE_PREFIX + name, artifact.modules[name]) for name in sorted(artifact.modules)]
    out = bytearray(_HEADER)
    for name, payload in sections:
        raw_name = name.encode()
        content = _leb(len(raw_name)) + raw_name + payload
        out += b"\0" + _leb(len(content)) + content
    return bytes(out)


def custom_sections(data: bytes) -> dict[str, bytes]:
    """Custom sections of a module (later duplicates win); other sections are skipped."""
    if data[:8] != _HEADER:
        raise ValueError("not a WebAssembly module")
    pos, found = 8, {}
    while pos < len(data):
        section_id = data[pos]
        size, pos = _read_leb(data, pos + 1)
        end = pos + size
        if end > len(data):
            raise ValueError("truncated section")
        if section_id == 0:
            name_len, name_pos = _read_leb(data, pos)
            name = data[name_pos : name_pos + name_len].decode("utf-8", errors="replace")
            found[name] = data[name_pos + name_len : end]
        pos = end
    return found


def is_artifact(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            head = f.read(64)
    except OSError:
        return False
    return head[:8] == _HEADER and META_SECTION.encode() in head


def decode(data: bytes, source: str) -> Artifact:
    try:
        sections = custom_sections(data)
        meta = json.loads(sections[META_SECTION])
    except (ValueError, KeyError, json.JSONDecodeError) as exc:
        raise InvalidModule(f"{source}: not a valid hugind artifact ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise InvalidModule(f"{source}: unsupported artifact format {meta.get('format')!r} (expected {FORMAT})")
    modules = {}
    for name in meta.get("modules", []):
        payload = sections.get(BYTECODE_PREFIX + str(name))
        if payload is None:
            raise InvalidModule(f"{source}: artifact lists module '{name}' but carries no bytecode for it")
        modules[str(name)] = payload
    entry = str(meta.get("entry", ""))
    if entry not in modules:
        raise InvalidModule(f"{source}: artifact entry '{entry}' is not among its modules")
    manifest = meta.get("manifest")
    return Artifact(str(meta.get("engine_sha256", "")), entry, manifest if isinstance(manifest, str) else None, modules)
