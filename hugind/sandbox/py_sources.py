"""What a Python agent sees of its own folder: its ``.py`` files, as they were hashed.

A JS agent's folder reaches the engine only through the module loader, which
hands out ``.js`` files inside the agent root (host/modules.py). A Python
guest imports through WASI, so its folder would have to be preopened, and a
preopened folder shows everything in it to ``open()``: a ``.env`` the user
left beside ``agent.yaml``, data the policy does not grant. Instead, each run
gets a private copy holding only the agent's ``.py`` files (no links, no
``__pycache__``), written from the same bytes its digest covers
(``pinning.py``): what ``--expect`` vouched for is exactly what ``import``
reads, and a file changed after the check is not seen.

The copy lives in a fresh ``0700`` directory under hugind's private cache
(``<cache>/py-sources``), its files read-only, and is removed when the run's
instance goes (or, at the latest, when the process exits). Not in the
system's temporary folder: a policy may make that writable, and another run
(a team member with other permissions, a batch item) could then rewrite the
modules this run imports; no policy may reach the cache (policy/boundary.py).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import weakref
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from hugind.errors import EngineError, UsageError

PREFIX = "hugind-py-"
PINNED_SOURCES = "python_sources"  # Agent.extra key: name -> bytes, the sources its digest covers


def _checked(name: str) -> PurePosixPath:
    path = PurePosixPath(name)
    if path.is_absolute() or not path.parts or any(p in ("", ".", "..") for p in path.parts):
        raise UsageError(f"the agent file name {name!r} is not a plain relative path")
    if path.suffix != ".py":
        raise UsageError(f"the agent file {name!r} is not a .py file")
    return path


def _private_base() -> Path:
    from hugind.paths import cache_root

    base = cache_root() / "py-sources"
    try:
        base.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = base.lstat()
    except OSError as exc:
        raise EngineError(f"cannot make {base} for the agent's sources: {exc.strerror}") from None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise EngineError(f"{base} is not a private directory of this user; the agent's sources are not copied there")
    return base


def materialize(sources: Mapping[str, bytes], base: Path | None = None) -> Path:
    """A new private directory under ``base`` (hugind's cache by default) holding
    ``sources`` (relative name -> bytes), read-only."""
    for name in sources:
        _checked(name)  # every name is checked before anything is written
    root = Path(tempfile.mkdtemp(prefix=PREFIX, dir=base if base is not None else _private_base()))  # 0700
    try:
        for name, data in sources.items():
            target = root.joinpath(*_checked(name).parts)
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o400)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
    except BaseException:
        remove(root)
        raise
    return root


def remove(root: Path) -> None:
    """Remove a directory ``materialize`` made (its read-only files included)."""
    shutil.rmtree(root, ignore_errors=True)


def tie_to(owner: object, root: Path) -> None:
    """Remove ``root`` when ``owner`` is collected, or at exit."""
    weakref.finalize(owner, remove, root)
