"""Files named on the command line that are not files: a device, a FIFO, a directory.
Each command refuses them at once with one line and its exit code: nothing hangs
reading a FIFO nobody writes, nothing reads /dev/zero until memory runs out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hugind.errors import ExitCode, UsageError
from hugind.userfile import read_user_file
from tests.conftest import REPO, run_cli

HELLO = str(REPO / "examples" / "hello")


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


def _commands(target: str, tmp_path: Path) -> list[tuple[list[str], int]]:
    inputs = tmp_path / "in.jsonl"
    inputs.write_text('{"id": "a"}\n')
    return [
        (["replay", target], ExitCode.RECORD_INVALID),
        (["run", HELLO, "--policy", target], ExitCode.USAGE),
        (["team", target], ExitCode.USAGE),
        (["diff", target, HELLO], ExitCode.USAGE),
        (["batch", HELLO, target], ExitCode.USAGE),
        (["batch", HELLO, str(inputs), "--resume", target], ExitCode.USAGE),
    ]


@pytest.mark.parametrize("kind", ["device", "fifo", "directory"])
def test_commands_refuse_what_is_not_a_regular_file(kind, fifo, tmp_path):
    target = {"device": "/dev/zero", "fifo": str(fifo), "directory": str(tmp_path)}[kind]
    for argv, code in _commands(target, tmp_path):
        res = run_cli(*argv, timeout=60)
        lines = res.stderr.strip().splitlines()
        assert res.code == code, (argv, res.stderr)
        assert len(lines) == 1 and lines[0].startswith("hugind: error:") and target in lines[0], (argv, res.stderr)
        assert "Traceback" not in res.stderr


def test_a_file_past_the_limit_is_refused_and_one_within_is_read(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_bytes(b"x" * 2048)
    assert read_user_file(path, "the test file", limit=4096) == b"x" * 2048
    with pytest.raises(UsageError, match=r"the test file .* is larger than 1024 bytes"):
        read_user_file(path, "the test file", limit=1024)
