"""A run's working directories, resolved once per run.

A command runs in the shell's working directory (or a cwd it was given), and
that directory is part of its view: bound into the sandbox, and added to the
readable paths when it lies outside the roots. Were it resolved again for each
command, one command could swap it for a symlink (it lies in a writable root)
and the next command's view would include whatever the link names, up to
``/``. So each distinct cwd of a run is resolved at its first command and that
answer is kept for the run (per policy engine); a directory swapped afterwards
is entered inside the sandbox, where the link can only name what the view
already holds.
"""

from __future__ import annotations

import os
import threading
import weakref
from typing import Any

_RESOLVED: weakref.WeakKeyDictionary[Any, dict[str, str]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def run_cwd(engine: Any, cwd: str) -> str:
    """``cwd``'s real path as it was at this run's first command in it."""
    with _LOCK:
        known = _RESOLVED.setdefault(engine, {})
        real = known.get(cwd)
        if real is None:
            real = known[cwd] = os.path.realpath(cwd)
    return real
