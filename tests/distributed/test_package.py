"""The agent pack that travels to Ray workers: deterministic, digest-checked, unpacked defensively."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hugind.distributed.package import MAGIC, digest_of, pack, unpack
from hugind.errors import UsageError


@pytest.fixture(autouse=True)
def private_unpack_dir(tmp_path, monkeypatch):
    target = tmp_path / "unpacked"
    monkeypatch.setenv("HUGIND_RAY_AGENTS_DIR", str(target))
    return target


def _agent(root: Path) -> Path:
    folder = root / "my-agent"
    (folder / "data").mkdir(parents=True)
    (folder / "main.js").write_text("export default () => 1;")
    (folder / "data/notes.txt").write_text("notes")
    (folder / "run.sh").write_text("#!/bin/sh\n")
    (folder / "run.sh").chmod(0o755)
    os.symlink("data/notes.txt", folder / "notes")
    (folder / ".git").mkdir()
    (folder / ".git/HEAD").write_text("ref: refs/heads/main\n")
    return folder


def test_a_folder_packs_to_the_same_digest_and_unpacks_whole(tmp_path):
    folder = _agent(tmp_path / "a")
    first = pack(folder)
    os.utime(folder / "main.js", (1, 1))  # times are not part of the pack
    assert pack(folder) == first
    assert pack(_agent(tmp_path / "b")).digest == first.digest  # nor where the folder is
    out = unpack(first.digest, first.data)
    assert out.name == "my-agent"
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    assert files == ["data", "data/notes.txt", "main.js", "notes", "run.sh"]  # no .git
    assert (out / "notes").read_text() == "notes" and os.readlink(out / "notes") == "data/notes.txt"
    assert os.access(out / "run.sh", os.X_OK) and not os.access(out / "main.js", os.X_OK)
    assert unpack(first.digest, first.data) == out  # the second time: the copy already there


def test_a_single_file_agent_is_shipped_as_that_file(tmp_path):
    script = tmp_path / "hello.js"
    script.write_text("export default () => 'hi';")
    packed = pack(script)
    out = unpack(packed.digest, packed.data)
    assert out.name == "hello.js" and out.read_text() == "export default () => 'hi';"


def test_a_link_leaving_the_folder_is_refused_when_packing(tmp_path):
    folder = _agent(tmp_path)
    os.symlink("/etc/hostname", folder / "escape")
    with pytest.raises(UsageError, match="the link escape leaves the agent folder"):
        pack(folder)


def test_bytes_that_do_not_match_the_digest_are_refused_before_writing(tmp_path, private_unpack_dir):
    packed = pack(_agent(tmp_path))
    with pytest.raises(UsageError, match="does not match its digest"):
        unpack(packed.digest, packed.data.replace(b"notes", b"NOTES"))
    assert not any(private_unpack_dir.glob("*"))  # refused before anything was written


def _forged(entries: list[dict], body: bytes = b"") -> bytes:
    head = {"entry": "evil", "folder": True, "entries": entries}
    return MAGIC + json.dumps(head).encode() + b"\n" + body


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_forged([{"path": "../outside", "kind": "file", "size": 1}], b"x"), "bad entry path"),
        (_forged([{"path": "/etc/x", "kind": "file", "size": 1}], b"x"), "bad entry path"),
        (_forged([{"path": "up", "kind": "link", "target": "../../x"}]), "points outside"),
        (_forged([{"path": "abs", "kind": "link", "target": "/etc"}]), "bad link target"),
        (_forged([{"path": "f", "kind": "file", "size": 9}], b"x"), "runs past the end"),
        (_forged([{"path": "f", "kind": "file", "size": 1}], b"xy"), "trailing bytes"),
        (_forged([{"path": "d", "kind": "device"}]), "unknown entry kind"),
        (b"not a pack", "not a hugind agent pack"),
    ],
)
def test_a_forged_pack_with_a_valid_digest_is_refused(data, message, tmp_path, private_unpack_dir):
    # The digest names the bytes, it does not vouch for them: the format is checked too.
    with pytest.raises(UsageError, match=message):
        unpack(digest_of(data), data)
    assert not (tmp_path / "outside").exists()
    assert [p.name for p in private_unpack_dir.iterdir()] == []  # the staging copy is gone
