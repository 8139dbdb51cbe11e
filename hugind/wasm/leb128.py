"""LEB128 integers, as the WebAssembly binary format encodes them (strictly)."""

from __future__ import annotations


class WasmFormatError(ValueError):
    """The bytes are not a well-formed WebAssembly module (or use a feature this reader refuses)."""


def read_unsigned(buf: bytes, pos: int, bits: int = 32) -> tuple[int, int]:
    """Decode an unsigned LEB128 of at most ``bits`` bits at ``pos``; returns (value, next position)."""
    result = 0
    shift = 0
    max_bytes = (bits + 6) // 7
    for i in range(max_bytes):
        if pos >= len(buf):
            raise WasmFormatError("unexpected end of data inside an integer")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            if i == max_bytes - 1 and byte >> (bits - 7 * i):
                raise WasmFormatError(f"integer too large for u{bits}")
            return result, pos
    raise WasmFormatError(f"integer longer than {max_bytes} bytes (u{bits})")


def read_signed(buf: bytes, pos: int, bits: int) -> tuple[int, int]:
    """Decode a signed LEB128 of at most ``bits`` bits at ``pos``; returns (value, next position)."""
    result = 0
    shift = 0
    max_bytes = (bits + 6) // 7
    for i in range(max_bytes):
        if pos >= len(buf):
            raise WasmFormatError("unexpected end of data inside an integer")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            if byte & 0x40:
                result -= 1 << shift
            if i == max_bytes - 1:
                # The unused high bits of the last byte must be a sign extension.
                low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
                if not low <= result <= high:
                    raise WasmFormatError(f"integer out of range for s{bits}")
            return result, pos
    raise WasmFormatError(f"integer longer than {max_bytes} bytes (s{bits})")


def unsigned(value: int) -> bytes:
    if value < 0:
        raise ValueError("unsigned LEB128 of a negative number")
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def signed(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        done = (value == 0 and not byte & 0x40) or (value == -1 and byte & 0x40)
        out.append(byte if done else byte | 0x80)
        if done:
            return bytes(out)
