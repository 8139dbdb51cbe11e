"""Where hugind keeps its own files. Imports nothing from hugind, so both the
policy (which must deny agents these paths) and the sandbox can use it."""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path


def cache_root() -> Path:
    """Compiled modules and build outputs; never reachable by agents."""
    override = os.environ.get("HUGIND_CACHE_DIR")
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "hugind"


def hugind_home(env: Mapping[str, str] | None = None) -> Path:
    """``$HUGIND_HOME`` or ``~/.hugind``: the user's config, skills and saved sessions."""
    env = os.environ if env is None else env
    value = env.get("HUGIND_HOME")
    return Path(value).expanduser() if value else Path.home() / ".hugind"


def engine_dir() -> Path:
    """The installed JS engine (hugind/_engine)."""
    return Path(__file__).resolve().parent / "_engine"


def internal_dirs() -> tuple[Path, ...]:
    """hugind's own files, resolved: an agent may neither read nor write them,
    whatever its manifest lists. The cache and the engine (a writable cache of
    native code is an escape), the user's backend config (it may hold API
    keys) and saved sessions (other runs' conversations). A path may be a file.

    Asked at the start of every run, so the resolved paths are cached, keyed
    by the environment they are derived from."""
    env = tuple(os.environ.get(name) for name in ("HUGIND_CACHE_DIR", "XDG_CACHE_HOME", "HOME", "HUGIND_HOME"))
    return _resolved_internal_dirs(env)


@functools.lru_cache(maxsize=8)
def _resolved_internal_dirs(_env_key: tuple[str | None, ...]) -> tuple[Path, ...]:
    home = hugind_home()
    private = (cache_root(), engine_dir(), home / "config.yaml", home / "sessions")
    return tuple(Path(os.path.realpath(p)) for p in private)
