"""README pairings a newcomer tries (issue 28): `check --expect` with the digest
`hugind build` printed for the same folder, and the standalone build's size."""

from __future__ import annotations

import re

from hugind.errors import ExitCode
from tests.conftest import REPO, run_cli, write_agent

README = (REPO / "README.md").read_text()


def test_a_folder_answers_to_its_builds_digest(tmp_path):
    agent = write_agent(
        tmp_path / "agent",
        {"main.js": "import { n } from './lib.js';\nexport default () => n;\n", "lib.js": "export const n = 7;\n"},
        {"name": "pinned", "entry_point": "main.js"},
    )
    built = run_cli("build", str(agent), "-o", str(tmp_path / "agent.wasm"))
    assert built.code == 0, built.stderr
    digest = built.stdout.strip()
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest)
    checked = run_cli("check", str(agent), "--expect", digest)
    assert checked.code == 0, checked.stderr
    ran = run_cli("run", str(agent), "--expect", digest)
    assert (ran.code, ran.stdout) == (0, "7\n"), ran.stderr
    # Another module under the same pin is refused, and the message names both digests.
    (agent / "lib.js").write_text("export const n = 8;\n")
    refused = run_cli("run", str(agent), "--expect", digest)
    assert refused.code == ExitCode.USAGE and refused.stdout == ""
    assert "its build's: sha256:" in refused.stderr and f"does not match --expect {digest}" in refused.stderr


def test_the_readme_standalone_size_is_the_measured_one(tmp_path):
    (figure,) = re.findall(r"hugind build --standalone examples/hello -o hello\.wasm\s+# ~([0-9.]+) MB", README)
    out = tmp_path / "hello.wasm"
    res = run_cli("build", "--standalone", str(REPO / "examples" / "hello"), "-o", str(out), timeout=300)
    assert res.code == 0, res.stderr
    measured_mb = out.stat().st_size / 1e6
    assert abs(measured_mb - float(figure)) / measured_mb < 0.15, (
        f"README says ~{figure} MB, the build is {measured_mb:.2f} MB"
    )
