"""Fixtures for the MCP client tests: the real reference servers from npm.

``.ci/run`` installs them (``npm ci --prefix tests/mcp_servers``); without
``node_modules`` the tests that need a server skip and say how to install them.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO

MODULES = REPO / "tests" / "mcp_servers" / "node_modules" / "@modelcontextprotocol"
EVERYTHING = MODULES / "server-everything" / "dist" / "index.js"
FILESYSTEM = MODULES / "server-filesystem" / "dist" / "index.js"
INSTALL_HINT = "run `npm ci --prefix tests/mcp_servers` (.ci/run does) to install the MCP reference servers"


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed; the MCP reference servers need it")
    return node


def _need(script: Path) -> None:
    if not script.is_file():
        pytest.skip(f"{script.relative_to(REPO)} is missing: {INSTALL_HINT}")


@pytest.fixture
def everything() -> Callable[..., dict[str, Any]]:
    """A factory of ``mcp:`` entries for server-everything (``marker`` tags its command line)."""
    node = _node()
    _need(EVERYTHING)

    def make(name: str = "everything", env: dict[str, str] | None = None, marker: str | None = None) -> dict:
        args = [str(EVERYTHING), "stdio"] + ([marker] if marker else [])
        entry: dict[str, Any] = {"name": name, "command": node, "args": args}
        if env is not None:
            entry["env"] = env
        return entry

    return make


@pytest.fixture
def filesystem() -> Callable[..., dict[str, Any]]:
    node = _node()
    _need(FILESYSTEM)

    def make(root: Path, name: str = "files") -> dict:
        return {"name": name, "command": node, "args": [str(FILESYSTEM), str(root)]}

    return make


@pytest.fixture
def marker() -> str:
    return f"hugind-test-{uuid.uuid4().hex}"


def processes_with(text: str) -> list[int]:
    """Live (non-zombie) processes whose command line contains ``text``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(") ", 1)[1][:1]
        except (OSError, IndexError):
            continue
        if text in cmdline and state != "Z":
            found.append(int(entry))
    return found
