"""docs/npm.md, followed as written with the npm installed here (issue 28).

The doc's first shell block, its main.js and its esbuild line run in a fresh
folder: ``npm init -y`` and ``npm pkg set`` as written (both offline). The two
``npm install`` lines would reach the registry, so the folder gets the
packages tests/npm_bundles already installed (each one the line names must be
there). Then every ``hugind`` line of the doc runs, and each must print what
``node main.js`` prints, byte for byte.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

DOC = REPO / "docs" / "npm.md"
MODULES = REPO / "tests" / "npm_bundles" / "node_modules"
NPM = shutil.which("npm")
NODE = shutil.which("node")
ENV = {**os.environ, "TZ": "UTC", "npm_config_update_notifier": "false", "npm_config_fund": "false"}

pytestmark = [
    pytest.mark.skipif(NPM is None or NODE is None, reason="npm and node are needed to follow docs/npm.md"),
    pytest.mark.skipif(
        not (MODULES / ".bin" / "esbuild").exists(),
        reason="tests/npm_bundles/node_modules is missing: run `npm ci --prefix tests/npm_bundles` (CI does)",
    ),
]


def _blocks(kind: str) -> list[str]:
    section = DOC.read_text().split("## From npm install to an agent", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{kind}\n(.*?)```", section, flags=re.S)


def _commands(block: str) -> list[str]:
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


def _sh(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, shell=True, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=300)


def _hugind(words: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    assert words[0] == "hugind"
    cmd = [sys.executable, "-m", "hugind", *words[1:]]
    env = {**ENV, "PYTHONPATH": os.pathsep.join([str(REPO), ENV.get("PYTHONPATH", "")])}
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_documented_route_prints_what_node_prints(tmp_path):
    setup, bundle_block, run_block = _blocks("sh")[:3]
    (main_js,) = _blocks("js")[:1]
    assert "npm pkg set type=module" in setup  # what makes the route work with npm 11's `npm init -y`
    here = tmp_path
    for command in _commands(setup):
        if command.startswith("mkdir my-agent && cd my-agent"):
            here = here / "my-agent"
            here.mkdir()
            continue
        if command.startswith("npm install"):
            for package in [w for w in shlex.split(command)[2:] if not w.startswith("-")]:
                assert (MODULES / package).is_dir(), f"{package} is not in {MODULES}"
            if not (here / "node_modules").exists():
                (here / "node_modules").symlink_to(MODULES)
            continue
        done = _sh(command, here)
        assert done.returncode == 0, f"{command}: {done.stderr}"
    (here / "main.js").write_text(main_js)
    expected = subprocess.run([NODE, "main.js"], cwd=here, env=ENV, capture_output=True, text=True, timeout=120)
    assert expected.returncode == 0, expected.stderr
    assert expected.stdout.startswith('{"success":true')
    for command in _commands(bundle_block):
        done = _sh(command, here)
        assert done.returncode == 0, f"{command}: {done.stderr}"
    for command in _commands(run_block):
        done = _hugind(shlex.split(command), here)
        assert done.returncode == 0, f"{command}: {done.stderr}"
        if " run " in f" {command} ":
            assert done.stdout == expected.stdout, command  # nothing more: no `{}` line
