"""``hugind build`` progress: on stderr with -v (or on a terminal), never on stdout,
which carries only the digest line scripts capture."""

from __future__ import annotations

import re

from tests.conftest import REPO, run_cli

DIGEST = re.compile(r"sha256:[0-9a-f]{64}\n")


def test_verbose_build_reports_progress_on_stderr_only(tmp_path):
    res = run_cli("build", str(REPO / "examples/hello"), "-o", str(tmp_path / "a.wasm"), "-v")
    assert res.code == 0, res.stderr
    assert DIGEST.fullmatch(res.stdout)
    steps = [line for line in res.stderr.splitlines() if line.startswith("hugind: ")]
    assert steps[0].startswith("hugind: loading the JS engine")
    assert "hugind: compiling main.js and its imports to bytecode" in steps
    assert "hugind: compiled 2 modules; writing the artifact" in steps


def test_build_is_quiet_when_stderr_is_not_a_terminal(tmp_path):
    res = run_cli("build", str(REPO / "examples/hello"), "-o", str(tmp_path / "a.wasm"))
    assert res.code == 0, res.stderr
    assert DIGEST.fullmatch(res.stdout)
    assert not [line for line in res.stderr.splitlines() if line.startswith("hugind: ")]
    assert res.stderr.startswith("wrote ")
