"""Build C agents with zig cc (cached by source hash) and lay them out as agent folders.

No .wasm is committed: every test compiles the examples and guests from
source. Builds are cached for the session under a pytest tmp dir, keyed by
the source, the SDK headers and the flags, so each module compiles once.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
SDK = REPO / "runtimes" / "wasm"
GUESTS = Path(__file__).resolve().parent / "guests"
EXAMPLES = REPO / "examples"

BASE_FLAGS = ("-target", "wasm32-wasi", "-O2", "-s", "-Wall", "-Wextra", "-Werror")
REACTOR_FLAGS = ("-mexec-model=reactor",)


class WasmBuilder:
    def __init__(self, cache: Path) -> None:
        self.cache = cache
        self.sdk_digest = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(SDK.glob("*.h")))).hexdigest()

    def build(self, source: Path, *, command: bool = False) -> Path:
        """Compile ``source`` to wasm32-wasi: a reactor (hugind_main) or, with ``command``, a WASI command."""
        flags = BASE_FLAGS if command else BASE_FLAGS + REACTOR_FLAGS
        key = hashlib.sha256(
            b"\0".join([source.read_bytes(), self.sdk_digest.encode(), " ".join(flags).encode()])
        ).hexdigest()[:20]
        out = self.cache / f"{source.stem}-{key}.wasm"
        if out.exists():
            return out
        tmp = out.with_suffix(f".tmp{os.getpid()}")
        cmd = [sys.executable, "-m", "ziglang", "cc", *flags, f"-I{SDK}", str(source), "-o", str(tmp)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            pytest.fail(f"zig cc failed for {source.name}:\n{proc.stderr}")
        tmp.replace(out)
        return out


@pytest.fixture(scope="session")
def wasm_builder(tmp_path_factory: pytest.TempPathFactory) -> WasmBuilder:
    try:
        import ziglang  # noqa: F401
    except ImportError:
        pytest.skip("the ziglang package (zig cc) is needed to build C agents")
    return WasmBuilder(tmp_path_factory.mktemp("wasm-build"))


@pytest.fixture
def example_agent(wasm_builder: WasmBuilder, tmp_path: Path) -> Callable[..., Path]:
    """A fresh copy of examples/NAME with agent.wasm built from its main.c."""

    def make(name: str, *, command: bool = False) -> Path:
        src = EXAMPLES / name
        dest = tmp_path / name
        shutil.copytree(src, dest, ignore=shutil.ignore_patterns("*.wasm"))
        shutil.copyfile(wasm_builder.build(src / "main.c", command=command), dest / "agent.wasm")
        return dest

    return make


@pytest.fixture
def guest_agent(wasm_builder: WasmBuilder, tmp_path: Path) -> Callable[..., Path]:
    """An agent folder running tests/wasm/guests/NAME.c, with an optional manifest body."""
    counter = iter(range(1_000_000))

    def make(name: str, *, command: bool = False, **manifest: object) -> Path:
        dest = tmp_path / f"{name}-{next(counter)}"
        dest.mkdir()
        shutil.copyfile(wasm_builder.build(GUESTS / f"{name}.c", command=command), dest / "agent.wasm")
        body = {"name": name.replace("_", "-"), "entry_point": "agent.wasm", **manifest}
        (dest / "agent.yaml").write_text(yaml.safe_dump(body, sort_keys=False))
        return dest

    return make
