"""Content digests: the ``sha256:<hex>`` an operator pins with ``--expect``.

A digest is SHA-256 over a canonical encoding of exactly what an agent runs.
The encoding is a domain tag followed by labelled fields, each written as
``u32be(len(label)) label u64be(len(value)) value``; every length is explicit,
so no two different field sequences encode to the same bytes. The first field
is the agent kind (``artifact``, ``js``, ``wasm``), so a digest of one kind can
never equal a digest of another. ``docs/design.md`` lists the fields per kind.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

from hugind.errors import UsageError

PREFIX = "sha256:"
_DOMAIN = b"hugind-digest/1\n"
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


class _Fields:
    """Feeds labelled, length-prefixed fields into one SHA-256."""

    def __init__(self, kind: str) -> None:
        self._hash = hashlib.sha256(_DOMAIN)
        self.add("kind", kind)

    def add(self, label: str, value: bytes | str) -> None:
        raw_label = label.encode("ascii")
        raw = value.encode("utf-8") if isinstance(value, str) else value
        self._hash.update(len(raw_label).to_bytes(4, "big") + raw_label + len(raw).to_bytes(8, "big"))
        self._hash.update(raw)

    def add_manifest(self, text: str | None) -> None:
        # An absent manifest (a bare file) and an empty agent.yaml are different agents.
        if text is None:
            self.add("no-manifest", b"")
        else:
            self.add("manifest", text)

    def add_modules(self, modules: Mapping[str, bytes], content_label: str) -> None:
        self.add("module-count", str(len(modules)))
        for name in sorted(modules, key=lambda n: n.encode("utf-8")):
            self.add("module", name)
            self.add(content_label, modules[name])

    def result(self) -> str:
        return PREFIX + self._hash.hexdigest()


def artifact_digest(
    fmt: int, engine_sha256: str, entry: str, manifest_text: str | None, bytecode: Mapping[str, bytes]
) -> str:
    """A built artifact: its bytecode only loads into one engine build, so the engine is part of it."""
    fields = _Fields("artifact")
    fields.add("format", str(fmt))
    fields.add("engine-sha256", engine_sha256)
    fields.add("entry", entry)
    fields.add_manifest(manifest_text)
    fields.add_modules(bytecode, "bytecode")
    return fields.result()


def source_digest(entry: str, manifest_text: str | None, sources: Mapping[str, bytes]) -> str:
    """A JS agent from source: its manifest and the source of every module its entry imports.

    The engine is left out on purpose: it is the operator's installed runtime,
    not the publisher's content, and a pin must survive a hugind upgrade.
    """
    fields = _Fields("js")
    fields.add("entry", entry)
    fields.add_manifest(manifest_text)
    fields.add_modules(sources, "source")
    return fields.result()


def python_digest(entry: str, manifest_text: str | None, sources: Mapping[str, bytes]) -> str:
    """A Python agent: its manifest, its entry's name and every ``.py`` file of its folder."""
    fields = _Fields("python")
    fields.add("entry", entry)
    fields.add_manifest(manifest_text)
    fields.add_modules(sources, "source")
    return fields.result()


def wasm_digest(manifest_text: str | None, module: bytes) -> str:
    """A raw WebAssembly agent: its module bytes and, for a folder, its manifest."""
    fields = _Fields("wasm")
    fields.add_manifest(manifest_text)
    fields.add("wasm", module)
    return fields.result()


def parse_expected(text: str) -> str:
    """Normalise an ``--expect`` value, refusing anything that is not ``sha256:<64 hex digits>``."""
    value = text.strip()
    hex_part = value[len(PREFIX) :].lower() if value.lower().startswith(PREFIX) else ""
    if not _HEX64.match(hex_part):
        raise UsageError(f"--expect must be {PREFIX}<64 hex digits> (as printed by `hugind check`), got {text!r}")
    return PREFIX + hex_part
