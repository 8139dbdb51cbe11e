"""Shared by the differential tests: the agents, the loopback chat server, and one
driver process per path (run once per session, compared by several tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.differential.agents import REPO, chat_step, make_cases
from tests.support.chat_server import ChatServer

REPEAT = 4  # per case and process: from the third run on, a JS agent starts on a kept instance
PATH_SWITCHES = ("HUGIND_RECYCLE", "HUGIND_RAW_FFI")


@pytest.fixture(scope="session")
def chat_server() -> Iterator[ChatServer]:
    with ChatServer(default=chat_step) as server:
        yield server


@pytest.fixture(scope="session")
def cases(tmp_path_factory: pytest.TempPathFactory, chat_server: ChatServer) -> list[dict[str, Any]]:
    root = tmp_path_factory.mktemp("differential-agents")
    wasm_files = None
    try:
        from tests.wasm.conftest import EXAMPLES, WasmBuilder

        wasm_files = WasmBuilder(tmp_path_factory.mktemp("differential-wasm")).build(EXAMPLES / "wasm-files" / "main.c")
    except ImportError:  # no zig: the C example is left out, the WAT agent stays
        pass
    return make_cases(root, wasm_files, chat_server.url)


def clean_env(**switches: str) -> dict[str, str]:
    """This process's environment with the path switches set to ``switches`` only."""
    env = {k: v for k, v in os.environ.items() if k not in PATH_SWITCHES}
    env.update(switches)
    return env


@pytest.fixture(scope="session")
def drive(tmp_path_factory: pytest.TempPathFactory, cases: list[dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """``drive(name, **switches)``: every case REPEAT times in one process with ``switches``
    set (memoised by name: a session runs each path once)."""
    done: dict[str, dict[str, Any]] = {}

    def run(name: str, **switches: str) -> dict[str, Any]:
        if name not in done:
            work = tmp_path_factory.mktemp(f"drive-{name}")
            spec = work / "spec.json"
            spec.write_text(json.dumps({"repeat": REPEAT, "audit_dir": str(work / "audit"), "cases": cases}))
            proc = subprocess.run(
                [sys.executable, "-m", "tests.differential.driver", str(spec)],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                env=clean_env(**switches),
                cwd=REPO,
                timeout=600,
            )
            assert proc.returncode == 0, proc.stderr.decode()[-4000:]
            done[name] = json.loads(proc.stdout)
        return done[name]

    return run


@pytest.fixture
def repo() -> Path:
    return REPO
