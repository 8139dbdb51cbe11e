"""Whether a module's code can change instance state that lives outside its
linear memory and globals: its tables, or its element and data segments.

An instance of a module whose code cannot do that is put back exactly as
fresh by restoring its memory and globals (hugind/sandbox/recycle.py). The
scan decodes every instruction of every function body and fails closed: an
instruction it does not know (SIMD, threads, GC, typed references, newer
exception handling) counts as a writer, since its immediates cannot be
skipped with certainty. What clang emits for C (the MVP, sign extension,
saturating conversions, bulk memory, reference types' ``call_indirect``
forms, multi-value blocks) is known.
"""

from __future__ import annotations

from hugind.wasm.leb128 import WasmFormatError, read_unsigned

# Immediate kinds, by opcode.
_NONE, _LEB, _LEB2, _BLOCK, _MEMARG, _F32, _F64, _BR_TABLE, _SELECT_T, _PREFIX_FC = range(10)

_KIND: dict[int, int] = {}
for _op in (0x00, 0x01, 0x05, 0x0B, 0x0F, 0x1A, 0x1B, 0xD1, *range(0x45, 0xC5)):
    _KIND[_op] = _NONE
for _op in (0x02, 0x03, 0x04):  # block, loop, if
    _KIND[_op] = _BLOCK
for _op in (0x0C, 0x0D, 0x10, 0x12, *range(0x20, 0x25), 0x25, 0x3F, 0x40, 0x41, 0x42, 0xD0, 0xD2):
    # br, br_if, call, return_call, local/global get/set/tee, table.get, memory.size,
    # memory.grow, i32/i64.const, ref.null (heap type), ref.func: one LEB each
    _KIND[_op] = _LEB
for _op in (0x11, 0x13):  # call_indirect, return_call_indirect: type, table
    _KIND[_op] = _LEB2
for _op in range(0x28, 0x3F):  # loads and stores
    _KIND[_op] = _MEMARG
_KIND[0x43], _KIND[0x44] = _F32, _F64
_KIND[0x0E] = _BR_TABLE
_KIND[0x1C] = _SELECT_T
_KIND[0xFC] = _PREFIX_FC

# 0xFC sub-opcodes: how many LEB immediates each has, for those that change no segment or table.
_FC_READS = {**{sub: 0 for sub in range(8)}, 10: 2, 11: 1, 16: 1}  # trunc_sat, memory.copy/fill, table.size
_FC_NAMES = {8: "memory.init", 9: "data.drop", 12: "table.init", 13: "elem.drop", 14: "table.copy", 15: "table.grow"}
_FC_NAMES[17] = "table.fill"

_PLAIN_VALTYPES = {0x7F, 0x7E, 0x7D, 0x7C, 0x7B, 0x70, 0x6F}


def state_writer(code_section: bytes | None) -> str | None:
    """The first instruction found in ``code_section`` (a code section's payload)
    that may change a table or a segment, or that this scan does not know; None
    when there is none."""
    if not code_section:
        return None
    buf = code_section
    try:
        count, pos = read_unsigned(buf, 0)
        for index in range(count):
            size, pos = read_unsigned(buf, pos)
            end = pos + size
            if end > len(buf):
                return f"function {index}: body past the end of the code section"
            groups, pos = read_unsigned(buf, pos)
            for _ in range(groups):
                _, pos = read_unsigned(buf, pos)
                if buf[pos] not in _PLAIN_VALTYPES:
                    return f"function {index}: local of type {buf[pos]:#x}"
                pos += 1
            found = _scan_body(buf, pos, end)
            if found is not None:
                return f"function {index}: {found}"
            pos = end
    except (WasmFormatError, IndexError):
        return "a function body could not be decoded"
    return None


def _skip_leb(buf: bytes, pos: int) -> int:
    while buf[pos] & 0x80:
        pos += 1
    return pos + 1


def _scan_body(buf: bytes, pos: int, end: int) -> str | None:
    kinds = _KIND
    while pos < end:
        op = buf[pos]
        pos += 1
        kind = kinds.get(op)
        if kind is None:
            return "table.set" if op == 0x26 else f"instruction {op:#04x}"
        if kind == _NONE:
            continue
        if kind == _LEB:
            pos = _skip_leb(buf, pos)
        elif kind == _MEMARG:
            align, pos = read_unsigned(buf, pos)
            if align & 0x40:  # multi-memory: a memory index follows
                pos = _skip_leb(buf, pos)
            pos = _skip_leb(buf, pos)
        elif kind == _BLOCK:
            if buf[pos] in (0x63, 0x64):  # (ref null? ht): typed references
                return f"block type {buf[pos]:#x}"
            pos = _skip_leb(buf, pos)  # 0x40, a value type, or a type index (s33)
        elif kind == _LEB2:
            pos = _skip_leb(buf, _skip_leb(buf, pos))
        elif kind == _F32:
            pos += 4
        elif kind == _F64:
            pos += 8
        elif kind == _BR_TABLE:
            targets, pos = read_unsigned(buf, pos)
            for _ in range(targets + 1):
                pos = _skip_leb(buf, pos)
        elif kind == _SELECT_T:
            types, pos = read_unsigned(buf, pos)
            for _ in range(types):
                if buf[pos] not in _PLAIN_VALTYPES:
                    return f"select of type {buf[pos]:#x}"
                pos += 1
        else:  # 0xFC
            sub, pos = read_unsigned(buf, pos)
            reads = _FC_READS.get(sub)
            if reads is None:
                return _FC_NAMES.get(sub, f"instruction 0xfc {sub}")
            for _ in range(reads):
                pos = _skip_leb(buf, pos)
    if pos != end:
        return "an instruction runs past the end of its function"
    return None
