"""A record's header is the record's word: its ``policy_file`` is a path hugind reads only
once the user vouched for the record (``--expect``); else the user names the file."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from hugind.errors import ExitCode
from tests.replay.helpers import error_line, lines, record_run, replay


def _forge(objs: list[dict[str, Any]], path: Path) -> None:
    """Write ``objs`` as a record with its hash chain recomputed, as anyone can."""
    prev, out = "0" * 64, []
    for seq, obj in enumerate(objs):
        line = json.dumps({**obj, "seq": seq, "prev": prev}, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        out.append(line.encode())
        prev = hashlib.sha256(out[-1]).hexdigest()
    path.write_bytes(b"\n".join(out) + b"\n")


def test_a_recorded_policy_file_is_read_only_for_a_vouched_record(make_agent, tmp_path):
    agent = make_agent({"main.js": "export default () => 41 + 1;"}, manifest={"name": "p", "entry_point": "main.js"})
    preset = tmp_path / "preset.yaml"
    preset.write_text("permissions:\n  limits:\n    timeout: 7\n")
    record = tmp_path / "run.hgrec"
    first = record_run(agent, record, "--policy", str(preset))
    assert first.code == 0, first.stderr
    digest = re.search(r"sha256:[0-9a-f]{64}", first.stderr).group(0)

    plain = replay(record)
    assert plain.code == ExitCode.USAGE
    assert "recorded with --policy" in error_line(plain) and "--expect" in error_line(plain)
    named = replay(record, "--policy", str(preset))
    assert named.code == 0, named.stderr
    assert named.stdout == first.stdout
    vouched = replay(record, "--expect", digest)
    assert vouched.code == 0, vouched.stderr

    # A forged header naming another file: the file is never opened (it would not parse).
    trap = tmp_path / "not-a-preset.yaml"
    trap.write_text("{{{ not yaml")
    objs = lines(record)
    objs[0]["policy_file"] = str(trap)
    forged = tmp_path / "forged.hgrec"
    _forge(objs, forged)
    refused = replay(forged)
    assert refused.code == ExitCode.USAGE
    # refused on the record's word alone, before the file could be parsed
    assert refused.stderr.splitlines() == [error_line(refused)]
    assert error_line(refused).startswith(f"hugind: error: {forged} was recorded with --policy")
