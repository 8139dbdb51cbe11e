"""Fixtures shared by every test package: agent folders and the real CLI."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session", autouse=True)
def _private_hugind_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Agentic runs save their sessions under $HUGIND_HOME: tests keep theirs out of the
    user's ~/.hugind (a test that needs a config or a home of its own sets it itself)."""
    os.environ.setdefault("HUGIND_HOME", str(tmp_path_factory.mktemp("hugind-home")))


@pytest.fixture(scope="session", autouse=True)
def _suite_warm_servers():
    """``hugind run`` subprocesses are served by warm servers (hugind/warm), as a user's
    are: the whole suite checks that a warm run behaves as a cold one. The suite keeps its
    servers apart from any other (a key of its own), and ends them when it ends."""
    key = f"pytest-{os.getpid()}"
    # A run not at a terminal starts no server unless asked (hugind/warm/spawn.py): the suite asks.
    os.environ.setdefault("HUGIND_WARM", "1")
    os.environ.setdefault("HUGIND_WARM_KEY", key)
    os.environ.setdefault("HUGIND_WARM_IDLE", "60")
    yield
    from tests.support.warm import end_servers

    end_servers(os.environ["HUGIND_WARM_KEY"])


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str


def write_agent(root: Path, files: dict[str, str], manifest: dict | None = None) -> Path:
    """Create an agent folder: ``files`` maps relative paths to (dedented) text."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    if manifest is not None:
        (root / "agent.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return root


@pytest.fixture
def make_agent(tmp_path: Path) -> Callable[..., Path]:
    counter = iter(range(1_000_000))

    def make(files: dict[str, str], manifest: dict | None = None, **manifest_keys) -> Path:
        if manifest is None:
            manifest = {"name": "test-agent", "entry_point": "main.js", **manifest_keys}
        return write_agent(tmp_path / f"agent{next(counter)}", files, manifest)

    return make


def run_cli(*args: str, stdin: str | None = None, env: dict[str, str] | None = None, timeout: float = 60) -> CliResult:
    """Run the real ``hugind`` command in a subprocess."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "hugind", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        cwd=REPO,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def cli() -> Callable[..., CliResult]:
    return run_cli


def pytest_configure(config: pytest.Config) -> None:
    """Give the suite's processes SIGINT and SIGQUIT as a terminal's commands get them.

    A runner that starts the suite as a background job (sh's ``cmd &``, ``nohup``) hands
    it both signals ignored, and an ignored signal stays ignored through every fork and
    exec: the runs the Ctrl-C tests start would then never see their SIGINT (hugind, as
    a shell does, keeps a signal its caller ignores ignored: a test checks that too)."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGQUIT) == signal.SIG_IGN:
        signal.signal(signal.SIGQUIT, signal.SIG_DFL)
