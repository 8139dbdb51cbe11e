"""The ``hugind build`` artifact: a bytecode-only WebAssembly module.

An artifact is a valid ``.wasm`` file made only of custom sections, in this
order and nothing else:

* ``hugind.artifact`` (JSON): ``{"format": 2, "engine_sha256", "entry",
  "manifest" (the agent.yaml text, or null), "modules": [names], "sha256"}``;
* ``hugind.bc/<name>`` for each listed module, in list order: QuickJS bytecode.

It carries no engine: running it links the bytecode to the one cached,
already-compiled JS engine, so many agents share one Cranelift compilation
(like Javy's dynamic mode). QuickJS bytecode is tied to the engine build, so
an artifact runs only on the engine whose hash it names.

``sha256`` is the artifact's content digest (``hugind.digest.artifact_digest``).
Decoding recomputes it and refuses any mismatch, and also refuses anything
that is not exactly the encoding ``encode`` writes (duplicate, unknown or
reordered sections, trailing bytes): a reader must never see a different
artifact than the one the digest names. The digest is not a signature (whoever
can edit the file can recompute it); pinning it with ``--expect`` is what
makes an edit detectable.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from hugind import jsontext
from hugind.digest import PREFIX, artifact_digest
from hugind.errors import InvalidModule

FORMAT = 2
META_SECTION = "hugind.artifact"
BYTECODE_PREFIX = "hugind.bc/"
_HEADER = b"\0asm\x01\0\0\0"
_META_KEYS = frozenset({"format", "engine_sha256", "entry", "manifest", "modules", "sha256"})


@dataclass(frozen=True)
class Artifact:
    engine_sha256: str
    entry: str
    manifest_text: str | None
    modules: dict[str, bytes]

    @cached_property
    def digest(self) -> str:
        """``sha256:<hex>`` over format, engine, entry, manifest and every module's name and bytecode."""
        return artifact_digest(FORMAT, self.engine_sha256, self.entry, self.manifest_text, self.modules)


class _Malformed(ValueError):
    """A structural problem; ``decode`` turns it into an InvalidModule naming the file."""


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
        if pos >= len(data) or shift > 28:
            raise _Malformed(f"truncated or corrupt section length at byte {pos}")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def encode(artifact: Artifact) -> bytes:
    names = sorted(artifact.modules)
    meta = {
        "format": FORMAT,
        "engine_sha256": artifact.engine_sha256,
        "entry": artifact.entry,
        "manifest": artifact.manifest_text,
        "modules": names,
        "sha256": artifact.digest.removeprefix(PREFIX),
    }
    sections = [(META_SECTION, json.dumps(meta, ensure_ascii=False).encode())]
    sections += [(BYTECODE_PREFIX + name, artifact.modules[name]) for name in names]
    out = bytearray(_HEADER)
    for name, payload in sections:
        raw_name = name.encode()
        content = _leb(len(raw_name)) + raw_name + payload
        out += b"\0" + _leb(len(content)) + content
    return bytes(out)


def custom_sections(data: bytes) -> list[tuple[str, bytes]]:
    """The sections of an artifact, in file order; anything but a well-formed custom section is refused."""
    if data[:8] != _HEADER:
        raise _Malformed("not a WebAssembly module")
    pos, found, seen = 8, [], set()
    while pos < len(data):
        start = pos
        section_id = data[pos]
        if section_id != 0:
            raise _Malformed(f"unexpected non-custom section (id {section_id}) or trailing bytes at byte {start}")
        size, pos = _read_leb(data, pos + 1)
        end = pos + size
        if end > len(data):
            raise _Malformed(f"truncated section at byte {start} ({size} bytes declared, {len(data) - pos} present)")
        name_len, name_pos = _read_leb(data, pos)
        if name_pos + name_len > end:
            raise _Malformed(f"corrupt section name at byte {start}")
        try:
            name = data[name_pos : name_pos + name_len].decode("utf-8")
        except UnicodeDecodeError:
            raise _Malformed(f"section name at byte {start} is not UTF-8") from None
        if name in seen:
            # wasm lets a later custom section shadow nothing, but a naive reader
            # keeping the last one would run content the digest never covered.
            raise _Malformed(f"section '{name}' appears twice")
        seen.add(name)
        found.append((name, data[name_pos + name_len : end]))
        pos = end
    return found


def is_artifact(path: Path) -> bool:
    """True if the file's first section is a ``hugind.*`` one: it is then decoded (strictly) as an artifact."""
    try:
        with path.open("rb") as f:
            head = f.read(64)
    except OSError:
        return False
    if head[:8] != _HEADER or len(head) < 10 or head[8] != 0:
        return False
    try:
        _size, pos = _read_leb(head, 9)
        name_len, pos = _read_leb(head, pos)
    except _Malformed:
        return False
    return head[pos : pos + min(name_len, 7)] == b"hugind."


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _Malformed("the metadata repeats a key")
    return dict(pairs)


def _parse_meta(payload: bytes) -> dict[str, Any]:
    try:
        meta = jsontext.loads(payload.decode("utf-8"), object_pairs_hook=_no_duplicate_keys)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _Malformed(f"its metadata is not valid JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise _Malformed("its metadata is not a JSON object")
    fmt = meta.get("format")
    if fmt != FORMAT:
        if isinstance(fmt, int) and not isinstance(fmt, bool) and fmt < FORMAT:
            raise _Malformed(
                f"artifact format {fmt} predates integrity digests (this hugind reads format {FORMAT}); "
                "rebuild it with `hugind build`"
            )
        raise _Malformed(f"unsupported artifact format {fmt!r} (this hugind reads format {FORMAT})")
    if "sha256" not in meta:
        raise _Malformed("it carries no integrity digest ('sha256' is missing from its metadata)")
    unknown = sorted(set(meta) - _META_KEYS)
    if unknown:
        raise _Malformed(f"unknown metadata key '{unknown[0]}'")
    checks = {
        "engine_sha256": isinstance(meta.get("engine_sha256"), str),
        "entry": isinstance(meta.get("entry"), str),
        "manifest": meta.get("manifest") is None or isinstance(meta.get("manifest"), str),
        "modules": isinstance(meta.get("modules"), list) and all(isinstance(m, str) for m in meta["modules"]),
        "sha256": isinstance(meta.get("sha256"), str),
    }
    bad = [key for key, ok in checks.items() if not ok]
    if bad:
        raise _Malformed(f"metadata '{bad[0]}' is missing or has the wrong type")
    return meta


def _decode(data: bytes) -> Artifact:
    sections = custom_sections(data)
    if not sections or sections[0][0] != META_SECTION:
        raise _Malformed(f"its first section is not '{META_SECTION}'")
    meta = _parse_meta(sections[0][1])
    names: list[str] = meta["modules"]
    if len(set(names)) != len(names):
        raise _Malformed("its metadata lists a module twice")
    for name in names:
        # Only names the module loader can produce: a normalised relative .js path inside the root.
        if posixpath.normpath(name) != name or name.startswith(("../", "/")) or not name.endswith(".js"):
            raise _Malformed(f"module name {name!r} is not a relative .js path inside the agent")
    modules: dict[str, bytes] = {}
    for section, payload in sections[1:]:
        name = section.removeprefix(BYTECODE_PREFIX)
        if section == name or name not in names:
            raise _Malformed(f"unexpected section '{section}' (not a module the metadata lists)")
        modules[name] = payload
    missing = [name for name in names if name not in modules]
    if missing:
        raise _Malformed(f"it lists module '{missing[0]}' but carries no bytecode for it")
    if meta["entry"] not in modules:
        raise _Malformed(f"its entry '{meta['entry']}' is not among its modules")
    art = Artifact(meta["engine_sha256"], meta["entry"], meta["manifest"], modules)
    recorded = PREFIX + meta["sha256"]
    if art.digest != recorded:
        raise _Malformed(
            f"integrity check failed: its content hashes to {art.digest}, not the {recorded} recorded "
            "at build; the artifact was modified after `hugind build`"
        )
    # Backstop: only the exact bytes `encode` writes are accepted, so one digest names one file.
    if encode(art) != data:
        raise _Malformed("it is not in the canonical encoding `hugind build` writes (reordered or re-encoded)")
    return art


def decode(data: bytes, source: str) -> Artifact:
    try:
        return _decode(data)
    except _Malformed as exc:
        raise InvalidModule(f"{source}: not a valid hugind artifact: {exc}; nothing was run") from None
