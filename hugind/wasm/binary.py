"""A small, strict reader/writer for WebAssembly modules (the MVP binary format
plus the bulk-memory data forms).

A module is kept as its list of sections, each as raw payload bytes, so any
section nobody touches is written back byte for byte. The few sections the
snapshotter rewrites (imports, memory, global, export, start, data, datacount)
have a decoder and an encoder here; anything they cannot represent faithfully
is refused with a WasmFormatError naming it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from hugind.wasm.leb128 import WasmFormatError, read_signed, read_unsigned, signed, unsigned

MAGIC = b"\0asm\x01\0\0\0"

CUSTOM, TYPE, IMPORT, FUNCTION, TABLE, MEMORY, GLOBAL, EXPORT, START, ELEMENT, CODE, DATA, DATACOUNT, TAG = range(14)

# Where each known section may appear; custom sections go anywhere.
_ORDER = [TYPE, IMPORT, FUNCTION, TABLE, MEMORY, TAG, GLOBAL, EXPORT, START, ELEMENT, DATACOUNT, CODE, DATA]
_RANK = {sid: i for i, sid in enumerate(_ORDER)}

# Extern kinds (imports and exports).
KIND_FUNC, KIND_TABLE, KIND_MEMORY, KIND_GLOBAL, KIND_TAG = range(5)

I32, I64, F32, F64, V128, FUNCREF, EXTERNREF = 0x7F, 0x7E, 0x7D, 0x7C, 0x7B, 0x70, 0x6F
_VALTYPES = {I32, I64, F32, F64, V128, FUNCREF, EXTERNREF}

_END = 0x0B


@dataclass
class Section:
    id: int
    payload: bytes


@dataclass
class Limits:
    min: int
    max: int | None
    shared: bool = False
    is64: bool = False


@dataclass
class Import:
    module: str
    name: str
    kind: int


@dataclass
class Global:
    valtype: int
    mutable: bool
    init: bytes  # the constant expression, including its final `end`


@dataclass
class Export:
    name: str
    kind: int
    index: int


@dataclass
class DataSegment:
    data: bytes
    offset: bytes | None = None  # constant expression; None: passive
    memory: int = 0


@dataclass
class Module:
    sections: list[Section] = field(default_factory=list)

    def find(self, sid: int) -> Section | None:
        found = [s for s in self.sections if s.id == sid]
        if len(found) > 1:
            raise WasmFormatError(f"section {sid} appears {len(found)} times")
        return found[0] if found else None

    def payload(self, sid: int) -> bytes | None:
        section = self.find(sid)
        return section.payload if section else None

    def put(self, sid: int, payload: bytes | None) -> None:
        """Replace section ``sid`` (None: remove it), inserting it in order if it was absent."""
        existing = self.find(sid)
        if payload is None:
            if existing is not None:
                self.sections.remove(existing)
            return
        if existing is not None:
            existing.payload = payload
            return
        rank = _RANK[sid]
        at = len(self.sections)
        for i, section in enumerate(self.sections):
            if section.id != CUSTOM and _RANK[section.id] > rank:
                at = i
                break
        self.sections.insert(at, Section(sid, payload))

    def to_bytes(self) -> bytes:
        out = bytearray(MAGIC)
        for section in self.sections:
            out.append(section.id)
            out += unsigned(len(section.payload))
            out += section.payload
        return bytes(out)


def parse(wasm: bytes) -> Module:
    if wasm[:8] != MAGIC:
        raise WasmFormatError("not a WebAssembly 1.0 module (bad magic number or version)")
    pos = 8
    module = Module()
    last_rank = -1
    while pos < len(wasm):
        sid = wasm[pos]
        size, pos = read_unsigned(wasm, pos + 1)
        end = pos + size
        if end > len(wasm):
            raise WasmFormatError(f"section {sid} runs past the end of the module")
        if sid != CUSTOM:
            if sid not in _RANK:
                raise WasmFormatError(f"unknown section id {sid}")
            if _RANK[sid] <= last_rank:
                raise WasmFormatError(f"section {sid} is out of order or repeated")
            last_rank = _RANK[sid]
        module.sections.append(Section(sid, bytes(wasm[pos:end])))
        pos = end
    return module


# ---- a cursor over one section's payload ----------------------------------------


class Reader:
    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.pos = 0

    def u32(self) -> int:
        value, self.pos = read_unsigned(self.buf, self.pos)
        return value

    def u64(self) -> int:
        value, self.pos = read_unsigned(self.buf, self.pos, 64)
        return value

    def byte(self) -> int:
        if self.pos >= len(self.buf):
            raise WasmFormatError("unexpected end of section")
        value = self.buf[self.pos]
        self.pos += 1
        return value

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.buf):
            raise WasmFormatError("unexpected end of section")
        value = self.buf[self.pos : self.pos + n]
        self.pos += n
        return value

    def name(self) -> str:
        raw = self.take(self.u32())
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise WasmFormatError("a name is not valid UTF-8") from None

    def done(self) -> None:
        if self.pos != len(self.buf):
            raise WasmFormatError(f"{len(self.buf) - self.pos} stray bytes at the end of a section")

    def limits(self) -> Limits:
        flags = self.byte()
        if flags & ~0x07:
            raise WasmFormatError(f"unknown limits flags {flags:#x}")
        is64 = bool(flags & 4)
        read = self.u64 if is64 else self.u32
        low = read()
        high = read() if flags & 1 else None
        return Limits(low, high, shared=bool(flags & 2), is64=is64)

    def valtype(self) -> int:
        t = self.byte()
        if t not in _VALTYPES:
            raise WasmFormatError(f"unsupported value type {t:#x}")
        return t

    def const_expr(self) -> bytes:
        """A constant expression up to and including its `end`, returned raw."""
        start = self.pos
        while True:
            op = self.byte()
            if op == _END:
                return self.buf[start : self.pos]
            if op == 0x41:
                _, self.pos = read_signed(self.buf, self.pos, 32)
            elif op == 0x42:
                _, self.pos = read_signed(self.buf, self.pos, 64)
            elif op == 0x43:
                self.take(4)
            elif op == 0x44:
                self.take(8)
            elif op in (0x23, 0xD2):  # global.get, ref.func
                self.u32()
            elif op == 0xD0:  # ref.null
                self.byte()
            elif op in (0x6A, 0x6B, 0x6C, 0x7C, 0x7D, 0x7E):  # extended-const add/sub/mul
                pass
            elif op == 0xFD and self.u32() == 12:  # v128.const
                self.take(16)
            else:
                raise WasmFormatError(f"unsupported instruction {op:#x} in a constant expression")


def _vector(payload: bytes | None) -> tuple[Reader, int]:
    reader = Reader(payload or b"")
    return reader, (reader.u32() if payload else 0)


def _encode_vector(items: list[bytes]) -> bytes:
    return unsigned(len(items)) + b"".join(items)


def _encode_name(name: str) -> bytes:
    raw = name.encode("utf-8")
    return unsigned(len(raw)) + raw


def _encode_limits(limits: Limits) -> bytes:
    flags = (1 if limits.max is not None else 0) | (2 if limits.shared else 0) | (4 if limits.is64 else 0)
    out = bytes([flags]) + unsigned(limits.min)
    return out + unsigned(limits.max) if limits.max is not None else out


# ---- sections -----------------------------------------------------------------------


def imports(module: Module) -> list[Import]:
    reader, count = _vector(module.payload(IMPORT))
    out = []
    for _ in range(count):
        mod, name, kind = reader.name(), reader.name(), reader.byte()
        if kind == KIND_FUNC:
            reader.u32()
        elif kind == KIND_TABLE:
            reader.valtype()
            reader.limits()
        elif kind == KIND_MEMORY:
            reader.limits()
        elif kind == KIND_GLOBAL:
            reader.valtype()
            reader.byte()
        elif kind == KIND_TAG:
            reader.byte()
            reader.u32()
        else:
            raise WasmFormatError(f"unknown import kind {kind}")
        out.append(Import(mod, name, kind))
    reader.done()
    return out


def memories(module: Module) -> list[Limits]:
    reader, count = _vector(module.payload(MEMORY))
    out = [reader.limits() for _ in range(count)]
    reader.done()
    return out


def encode_memories(limits: list[Limits]) -> bytes:
    return _encode_vector([_encode_limits(lim) for lim in limits])


def tables(module: Module) -> int:
    """How many tables the module defines (their contents are not decoded)."""
    _, count = _vector(module.payload(TABLE))
    return count


def globals_(module: Module) -> list[Global]:
    reader, count = _vector(module.payload(GLOBAL))
    out = []
    for _ in range(count):
        valtype = reader.valtype()
        mut = reader.byte()
        if mut > 1:
            raise WasmFormatError(f"bad global mutability flag {mut}")
        out.append(Global(valtype, bool(mut), reader.const_expr()))
    reader.done()
    return out


def encode_globals(items: list[Global]) -> bytes:
    return _encode_vector([bytes([g.valtype, int(g.mutable)]) + g.init for g in items])


def exports(module: Module) -> list[Export]:
    reader, count = _vector(module.payload(EXPORT))
    out = []
    for _ in range(count):
        name, kind = reader.name(), reader.byte()
        out.append(Export(name, kind, reader.u32()))
    reader.done()
    return out


def encode_exports(items: list[Export]) -> bytes:
    return _encode_vector([_encode_name(e.name) + bytes([e.kind]) + unsigned(e.index) for e in items])


def data_segments(module: Module) -> list[DataSegment]:
    reader, count = _vector(module.payload(DATA))
    out = []
    for _ in range(count):
        flag = reader.u32()
        if flag == 0:
            offset = reader.const_expr()
            out.append(DataSegment(reader.take(reader.u32()), offset))
        elif flag == 1:
            out.append(DataSegment(reader.take(reader.u32())))
        elif flag == 2:
            memory = reader.u32()
            offset = reader.const_expr()
            out.append(DataSegment(reader.take(reader.u32()), offset, memory))
        else:
            raise WasmFormatError(f"unknown data segment form {flag}")
    reader.done()
    return out


def encode_data(items: list[DataSegment]) -> bytes:
    encoded = []
    for seg in items:
        body = unsigned(len(seg.data)) + seg.data
        if seg.offset is None:
            encoded.append(b"\x01" + body)
        elif seg.memory == 0:
            encoded.append(b"\x00" + seg.offset + body)
        else:
            encoded.append(b"\x02" + unsigned(seg.memory) + seg.offset + body)
    return _encode_vector(encoded)


# ---- constant expressions -----------------------------------------------------------


def const_expr(valtype: int, value: int | float) -> bytes:
    """The constant expression that yields ``value`` of type ``valtype``."""
    if valtype == I32:
        return b"\x41" + signed(_wrap(int(value), 32)) + bytes([_END])
    if valtype == I64:
        return b"\x42" + signed(_wrap(int(value), 64)) + bytes([_END])
    if valtype == F32:
        return b"\x43" + struct.pack("<f", value) + bytes([_END])
    if valtype == F64:
        return b"\x44" + struct.pack("<d", value) + bytes([_END])
    raise WasmFormatError(f"cannot write a constant of value type {valtype:#x}")


def i32_offset(value: int) -> bytes:
    return const_expr(I32, value)


def _wrap(value: int, bits: int) -> int:
    """Two's-complement view of ``value`` in ``bits`` bits (hosts may hand back either sign)."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value
