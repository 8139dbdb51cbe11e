"""Which warm server a client may use: the name of its socket.

Two processes are interchangeable for a run only if the same interpreter
would import the same code in the same way. The key covers what decides that
at import time: the interpreter, its flags and ``sys.path``, where hugind
lives, the user, and the variables read while an interpreter starts or a
library loads (``PYTHON*``, locale, time zone, the dynamic loader's ``LD_*``).
Everything else of a run (its argv, environment, directory, streams) is the
child's own. A server whose code changed on disk since it imported it is
*stale*; that is checked per request (``server.py``), not here.
"""

import os
import sys

PROTOCOL = "1"
# HUGIND_WARM_KEY: a name of the user's own, to keep a server apart (a CI job, a benchmark).
_EXACT = ("LANG", "LANGUAGE", "TZ", "HUGIND_WARM_KEY")
_PREFIXES = ("PYTHON", "LC_", "LD_")


def interpreter_environment(environ: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    """The variables that shape an interpreter's start (the key's, and all a server keeps)."""
    return {k: v for k, v in environ.items() if k in _EXACT or k.startswith(_PREFIXES)}


def compute(package_dir: str) -> str:
    from _sha256 import sha256

    parts = [
        PROTOCOL,
        sys.executable,
        sys.version,
        package_dir,
        str(os.geteuid()),
        repr(tuple(sys.flags)),
        repr(sorted(sys._xoptions.items())),
        repr(sys.warnoptions),
        "\0".join(sys.path),
        repr(sorted(interpreter_environment(os.environ).items())),
    ]
    return sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:40]


def address(key: str) -> bytes:
    """An abstract socket name: no file to leave behind or to find, and a network
    namespace of its own (every bubblewrap-confined command has one) cannot see it."""
    return b"\0hugind-warm-" + key.encode()
