"""Where hugind keeps its own files. Imports nothing from hugind, so both the
policy (which must deny agents these paths) and the sandbox can use it."""

from __future__ import annotations

import functools
import os
from pathlib import Path


def cache_root() -> Path:
    """Compiled modules and build outputs; never reachable by agents."""
    override = os.environ.get("HUGIND_CACHE_DIR")
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "hugind"


def engine_dir() -> Path:
    """The installed JS engine (hugind/_engine)."""
    return Path(__file__).resolve().parent / "_engine"


def internal_dirs() -> tuple[Path, ...]:
    """hugind's own files, resolved: an agent may neither read nor write them,
    whatever its manifest lists (a writable cache of native code is an escape).

    Asked on every filesystem check, so the resolved paths are cached, keyed
    by the environment they are derived from."""
    env = (os.environ.get("HUGIND_CACHE_DIR"), os.environ.get("XDG_CACHE_HOME"), os.environ.get("HOME"))
    return _resolved_internal_dirs(env)


@functools.lru_cache(maxsize=8)
def _resolved_internal_dirs(_env_key: tuple[str | None, ...]) -> tuple[Path, ...]:
    return tuple(Path(os.path.realpath(p)) for p in (cache_root(), engine_dir()))
