"""Seals on compiled-module cache entries: nothing hugind did not write is ever deserialized.

Deserializing a ``.cwasm`` runs its native code inside hugind, so an entry is
used only when it carries a seal under a per-user key (``<cache>/modules.key``,
32 random bytes, 0600, made on first use; the cache dir is one of hugind's
own paths, which no policy root may overlap, ``hugind/policy/boundary.py``).

The seal (``<entry>.mac``) holds

* ``bytes_mac``: HMAC-SHA256 over the entry's name and **every byte** of it,
  computed when hugind wrote it;
* ``stamp``: the identity of the inode that holds those bytes (device, inode,
  size, mtime and ctime in ns), and ``stamp_mac``, an HMAC over name,
  ``bytes_mac`` and ``stamp``.

Reading: the entry is opened once and its ``fstat`` compared with the stamp;
any write to the file, a new file under the name, a copy, or a rename changes
ctime or the inode, which user code cannot set back. When the stamp matches,
the bytes are those sealed; otherwise every byte is hashed again and must
match ``bytes_mac`` (then the stamp is renewed). Either way the inode checked
is the inode deserialized. Hashing every byte on every cold start would cost
more than the deserialization it protects (7.7 MB for the JS engine, plus
loading OpenSSL); the stamp check is two small HMACs with CPython's builtin
SHA-256.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from hugind.sha256 import sha256

KEY_BYTES = 32
MAC_BYTES = 32
_BLOCK = 64
_keys: dict[Path, bytes] = {}


class Unsealed(Exception):
    """A cache entry without a valid seal: never deserialized."""


class NoSeal(Unsealed):
    """An entry with no seal file at all: written by a hugind that did not seal (an older
    version). Rebuilt like any unsealed entry, but without a warning: nothing was tampered."""


def same(a: bytes, b: bytes) -> bool:
    """Constant-time comparison (``hmac.compare_digest`` is this very function; importing
    ``hmac`` would load OpenSSL on every cold start)."""
    import _operator

    compare = getattr(_operator, "_compare_digest", None)
    if compare is None:  # pragma: no cover - an interpreter without it
        import hmac

        compare = hmac.compare_digest
    return bool(compare(a, b))


def small_hmac(key: bytes, message: bytes) -> bytes:
    """HMAC-SHA256 (RFC 2104) with CPython's builtin SHA-256: for short messages,
    where loading OpenSSL (``hmac``/``hashlib``) would cost more than the hashing."""
    if len(key) > _BLOCK:
        key = sha256(key).digest()
    key = key.ljust(_BLOCK, b"\0")
    inner = sha256(bytes(b ^ 0x36 for b in key) + message).digest()
    return sha256(bytes(b ^ 0x5C for b in key) + inner).digest()


def bytes_mac(key: bytes, name: str, data: bytes | memoryview | object) -> bytes:
    """HMAC-SHA256 over ``name`` and every byte of ``data`` (OpenSSL: fast on megabytes)."""
    import hmac

    mac = hmac.new(key, name.encode() + b"\0", "sha256")
    mac.update(data)  # type: ignore[arg-type]  # any buffer: bytes, memoryview, mmap
    return mac.digest()


def cache_key(directory: Path) -> bytes | None:
    """The per-user key beside the cache dir ``directory`` (made on first use), or None when
    it cannot be trusted: not ours, a link, readable by others, or the wrong size."""
    path = directory.parent / "modules.key"
    known = _keys.get(path)
    if known is not None:
        return known
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return _new_key(path, directory)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        key = f.read(KEY_BYTES + 1)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077 or len(key) != KEY_BYTES:
        return None
    _keys[path] = key
    return key


def _new_key(path: Path, directory: Path) -> bytes | None:
    key = os.urandom(KEY_BYTES)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileExistsError:  # another process made it meanwhile: use theirs
        return cache_key(directory)
    except OSError:
        return None
    with os.fdopen(fd, "wb") as f:
        f.write(key)
    _keys[path] = key
    return key


def stamp_of(st: os.stat_result) -> bytes:
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}".encode()


@dataclass(frozen=True)
class Seal:
    bytes_mac: bytes
    stamp: bytes = b""

    def encode(self, key: bytes, name: str) -> bytes:
        return self.bytes_mac + small_hmac(key, self._signed(name)) + self.stamp

    def _signed(self, name: str) -> bytes:
        return name.encode() + b"\0" + self.bytes_mac + self.stamp

    @classmethod
    def decode(cls, raw: bytes, key: bytes, name: str) -> tuple[Seal, bool]:
        """(the seal, whether its stamp is ours); Unsealed if it is not a seal at all."""
        if len(raw) < 2 * MAC_BYTES:
            raise Unsealed
        seal = cls(raw[:MAC_BYTES], raw[2 * MAC_BYTES :])
        return seal, same(raw[MAC_BYTES : 2 * MAC_BYTES], small_hmac(key, seal._signed(name)))


def _private_file_ok(st: os.stat_result) -> bool:
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def check_entry(fd: int, path: Path, key: bytes) -> bytes | None:
    """Whether the open entry ``fd`` (at ``path``) is sealed by us: raise Unsealed if not.

    Returns a renewed seal to write when the bytes were verified in full (the file
    was copied or restored: same bytes, new inode), else None."""
    st = os.fstat(fd)
    if not _private_file_ok(st) or st.st_size == 0:
        raise Unsealed
    try:
        raw = path.with_suffix(".mac").read_bytes()
    except FileNotFoundError:
        raise NoSeal from None
    except OSError:
        raise Unsealed from None
    seal, stamp_ok = Seal.decode(raw, key, path.stem)
    if stamp_ok and seal.stamp == stamp_of(st):
        return None
    import mmap

    with mmap.mmap(fd, 0, prot=mmap.PROT_READ) as view:
        if not same(seal.bytes_mac, bytes_mac(key, path.stem, view)):
            raise Unsealed
    return Seal(seal.bytes_mac, stamp_of(st)).encode(key, path.stem)
