"""Where the compiled QuickJS-in-WASM engine lives and how it is loaded."""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

import wasmtime

from hugind.errors import EngineError, InvalidModule
from hugind.sandbox.engine import EngineConfig, load_module

ENGINE_FILE = Path(__file__).resolve().parent.parent / "_engine" / "hugind-js.wasm"


def engine_path() -> Path:
    override = os.environ.get("HUGIND_JS_ENGINE")
    return Path(override) if override else ENGINE_FILE


@lru_cache(maxsize=4)
def _engine_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise EngineError(
            f"the JS engine is not built ({path} is missing). It is compiled during "
            "`pip install -e .`; to build it by hand run `python runtimes/js/build_engine.py`."
        ) from None


def engine_bytes() -> bytes:
    return _engine_bytes(engine_path())


def engine_module(config: EngineConfig) -> wasmtime.Module:
    return load_module(engine_bytes(), config)


@lru_cache(maxsize=1)
def engine_sha256() -> str:
    return hashlib.sha256(engine_bytes()).hexdigest()


def check_artifact_engine(expected: str) -> None:
    """QuickJS bytecode only loads into the engine build that wrote it."""
    if expected != engine_sha256():
        raise InvalidModule(
            "this artifact was built for a different JS engine build; rebuild it with `hugind build` "
            f"(artifact engine {expected[:12]}, installed engine {engine_sha256()[:12]})"
        )
