"""SHA-256 for the paths every run takes, without importing ``hashlib``.

``hashlib`` loads OpenSSL's libcrypto when imported (~5 ms of a cold ``hugind
run``, which needs one short hash: the module cache's file name). CPython's own
SHA-256 module gives the same digests and loads in ~0.4 ms; the standard
library's ``random`` takes ``sha512`` the same way. Its name changed in 3.12,
and a build may leave it out, so ``hashlib`` stays the fallback.
"""

from __future__ import annotations

try:
    from _sha2 import sha256  # CPython 3.12+
except ImportError:
    try:
        from _sha256 import sha256  # CPython 3.11
    except ImportError:  # pragma: no cover - an interpreter without the builtin module
        from hashlib import sha256

__all__ = ["sha256"]
