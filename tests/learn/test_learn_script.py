"""`hugind run --learn` on script agents through the CLI: write access only where a
write happened, hosts with their ports, denials reported and not learned, a
starting preset respected, and an output that cannot be written refused whole."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from hugind.errors import UsageError
from hugind.learn.render import write_policy
from tests.conftest import run_cli, write_agent
from tests.support.http_server import RecordingServer, reply

WRITER = """
export default async () => {
  const t = fs.read_text("data/in/a.txt");
  fs.write_text("out/b/r.txt", t.toUpperCase());
  return fs.read_text("out/b/r.txt");
};
"""


@pytest.fixture
def writer(tmp_path: Path) -> Path:
    manifest = {
        "name": "writer",
        "entry_point": "main.js",
        "runtime_fs_mode": "read-write",
        "permissions": {"filesystem": {"read": ["data", "docs"], "write": ["out", "logs"]}},
    }
    files = {"main.js": WRITER, "data/in/a.txt": "abc", "docs/x.txt": "x", "secret.txt": "s", "out/b/.keep": ""}
    root = write_agent(tmp_path / "writer", files, manifest)
    (root / "logs").mkdir()
    return root


def _learn(agent: Path, out: Path, *extra: str) -> tuple:
    result = run_cli("run", str(agent), "--learn", str(out), *extra)
    return result, (yaml.safe_load(out.read_text()) if out.exists() else None)


def test_write_access_only_where_a_write_happened(writer: Path, tmp_path: Path) -> None:
    out = tmp_path / "learned.yaml"
    result, doc = _learn(writer, out)
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout) == "ABC"
    fs = doc["permissions"]["filesystem"]
    assert doc["runtime_fs_mode"] == "read-write"
    assert fs["write"] == ["out/b"]  # not out, not logs
    assert fs["read"] == ["data/in"]  # not data, not docs
    assert doc["permissions"]["shell"] == {"allow": False}
    assert doc["permissions"]["network"] == {"allow": False}

    again = run_cli("run", str(writer), "--policy", str(out), "--strict")
    assert again.code == 0, again.stderr
    assert again.stdout == result.stdout


PEEK = 'try { fs.read_text("secret.txt"); } catch (e) { eprint("refused: " + e.name); }'
PEEKER = WRITER.replace("return", PEEK + "\n  return")


def test_denials_are_reported_and_not_learned(writer: Path, tmp_path: Path) -> None:
    (writer / "main.js").write_text(PEEKER)
    out = tmp_path / "learned.yaml"
    result, doc = _learn(writer, out)
    assert "denied by the starting policy, not learned: filesystem read_text 'secret.txt'" in result.stderr
    assert "secret" not in yaml.safe_dump(doc["permissions"])


def test_the_learned_policy_is_a_boundary(writer: Path, tmp_path: Path) -> None:
    """Writing to the root the learning run only read is refused under the learned preset."""
    out = tmp_path / "learned.yaml"
    _learn(writer, out)
    (writer / "main.js").write_text('export default () => { fs.write_text("logs/l.txt", "x"); return 1; };')
    result = run_cli("run", str(writer), "--policy", str(out))
    assert result.code == 1, result.stderr
    assert "PermissionDenied" in result.stderr
    assert not (writer / "logs" / "l.txt").exists()


def test_learning_under_a_given_preset_stays_inside_it(writer: Path, tmp_path: Path) -> None:
    (writer / "main.js").write_text(PEEKER)
    preset = tmp_path / "start.yaml"
    preset.write_text(yaml.safe_dump({"permissions": {"filesystem": {"read": ["data"], "write": ["out/b"]}}}))
    out = tmp_path / "learned.yaml"
    result, doc = _learn(writer, out, "--policy", str(preset), "--strict")
    # --strict: the refused secret.txt read fails the run (exit 3), the policy is still written
    assert result.code == 3, result.stderr
    assert doc["permissions"]["filesystem"]["write"] == ["out/b"]
    assert doc["permissions"]["limits"]["fuel"] == 10_000_000_000  # --strict's default, kept


def test_hosts_are_learned_with_their_port_and_pass_strict(make_agent, tmp_path: Path) -> None:
    server = RecordingServer()
    server.routes["/v"] = lambda h: reply(h, 200, b"v1")
    try:
        agent = make_agent(
            {"main.js": f'export default async () => (await fetch("{server.url("/v")}")).text();'},
            permissions={"network": {"allow": True, "allowed_ips": ["127.0.0.0/8"]}},
        )
        out = tmp_path / "learned.yaml"
        result, doc = _learn(agent, out)
        assert result.code == 0, result.stderr
        net = doc["permissions"]["network"]
        assert net["allowed_ips"] == [f"127.0.0.1:{server.port}"] and net["allowed_domains"] == []
        again = run_cli("run", str(agent), "--policy", str(out), "--strict")
        assert again.code == 0, again.stderr
        assert json.loads(again.stdout) == "v1"
        assert server.paths() == ["/v", "/v"]
    finally:
        server.close()


@pytest.mark.parametrize("where", ["missing-dir/learned.yaml", "a-file/learned.yaml", "."])
def test_an_output_that_cannot_be_written_is_refused_before_the_run(writer: Path, tmp_path: Path, where: str) -> None:
    (tmp_path / "a-file").write_text("not a directory")
    before = sorted(p.name for p in tmp_path.iterdir())
    target = tmp_path / where
    marker = writer / "out" / "b" / "r.txt"
    result = run_cli("run", str(writer), "--learn", str(target))
    assert result.code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hugind: error: cannot write the learned policy to")
    assert not marker.exists()  # refused before the agent ran
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_failed_write_leaves_neither_half_a_file_nor_a_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "learned.yaml"
    target.mkdir()
    (target / "x").write_text("occupied")  # replacing a non-empty directory fails at the rename
    with pytest.raises(UsageError, match="cannot write the learned policy"):
        write_policy(target, "name: x\n")
    assert sorted(os.listdir(tmp_path)) == ["learned.yaml"]
    assert (target / "x").read_text() == "occupied"
