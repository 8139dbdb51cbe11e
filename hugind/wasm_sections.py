"""Section-level edits of a WebAssembly module: just what ``hugind build --standalone`` needs.

The module is split into its sections and put back together; only the
sections an edit names are decoded (memory, data count, data, exports), so
code, names and everything else pass through byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass

from hugind.errors import InvalidModule

HEADER = b"\0asm\x01\0\0\0"
PAGE = 65536
CUSTOM, MEMORY, EXPORT, CODE, DATA, DATA_COUNT = 0, 5, 7, 10, 11, 12


@dataclass
class Section:
    id: int
    payload: bytes


def uleb(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def sleb(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        done = (n == 0 and not byte & 0x40) or (n == -1 and byte & 0x40)
        out.append(byte | (0 if done else 0x80))
        if done:
            return bytes(out)


def read_uleb(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 35:
            raise InvalidModule(f"corrupt LEB128 number at byte {pos}")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def read_sections(data: bytes) -> list[Section]:
    if data[:8] != HEADER:
        raise InvalidModule("not a WebAssembly module (bad header)")
    pos, sections = 8, []
    while pos < len(data):
        section_id = data[pos]
        size, start = read_uleb(data, pos + 1)
        if start + size > len(data):
            raise InvalidModule(f"truncated section {section_id} at byte {pos}")
        sections.append(Section(section_id, data[start : start + size]))
        pos = start + size
    return sections


def write_module(sections: list[Section]) -> bytes:
    out = bytearray(HEADER)
    for s in sections:
        out += bytes([s.id]) + uleb(len(s.payload)) + s.payload
    return bytes(out)


def _only(sections: list[Section], section_id: int) -> Section | None:
    found = [s for s in sections if s.id == section_id]
    if len(found) > 1:
        raise InvalidModule(f"the module has {len(found)} sections of id {section_id}")
    return found[0] if found else None


def grow_memory(sections: list[Section], pages: int) -> int:
    """Raise the initial size of memory 0 by ``pages``; returns its old initial size (pages)."""
    memory = _only(sections, MEMORY)
    if memory is None:
        raise InvalidModule("the module defines no memory")
    count, pos = read_uleb(memory.payload, 0)
    flags = memory.payload[pos] if count else -1
    if count != 1 or flags not in (0, 1):
        raise InvalidModule("the module's memory is not one plain 32-bit memory")
    initial, after = read_uleb(memory.payload, pos + 1)
    rest = memory.payload[after:]
    if flags == 1:
        maximum, _ = read_uleb(rest, 0)
        if initial + pages > maximum:
            raise InvalidModule(f"the module's memory is capped at {maximum} pages; {initial + pages} are needed")
    memory.payload = memory.payload[: pos + 1] + uleb(initial + pages) + rest
    return initial


def append_data(sections: list[Section], segments: list[tuple[int, bytes]]) -> None:
    """Add active segments for memory 0 (address, bytes); applied after the module's own, in order."""
    encoded = b""
    for address, payload in segments:
        signed = address - (1 << 32) if address >= 1 << 31 else address  # i32.const is signed
        encoded += b"\x00\x41" + sleb(signed) + b"\x0b" + uleb(len(payload)) + payload
    data = _only(sections, DATA)
    if data is None:
        data = Section(DATA, uleb(0))
        code = _only(sections, CODE)
        sections.insert(sections.index(code) + 1 if code else len(sections), data)
    count, pos = read_uleb(data.payload, 0)
    data.payload = uleb(count + len(segments)) + data.payload[pos:] + encoded
    data_count = _only(sections, DATA_COUNT)
    if data_count is not None:
        data_count.payload = uleb(count + len(segments))


def keep_exports(sections: list[Section], names: set[str]) -> None:
    """Drop every export not named in ``names``."""
    exports = _only(sections, EXPORT)
    if exports is None:
        return
    payload = exports.payload
    count, pos = read_uleb(payload, 0)
    kept = []
    for _ in range(count):
        name_len, name_pos = read_uleb(payload, pos)
        end_name = name_pos + name_len
        _index, end = read_uleb(payload, end_name + 1)  # kind byte, then the index
        if payload[name_pos:end_name].decode("utf-8", "replace") in names:
            kept.append(payload[pos:end])
        pos = end
    exports.payload = uleb(len(kept)) + b"".join(kept)


def add_custom(sections: list[Section], name: str, payload: bytes) -> None:
    raw = name.encode()
    sections.append(Section(CUSTOM, uleb(len(raw)) + raw + payload))


def custom_payload(data: bytes, name: str) -> bytes | None:
    """The payload of the custom section ``name``, if the module has one."""
    for s in read_sections(data):
        if s.id != CUSTOM:
            continue
        name_len, pos = read_uleb(s.payload, 0)
        if s.payload[pos : pos + name_len] == name.encode():
            return s.payload[pos + name_len :]
    return None
