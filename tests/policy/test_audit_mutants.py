"""The audit log's exact records: the line written, what is masked or cut, what is kept in memory.

The log is what a user (or a replay) reads after the run to learn what the
agent asked for and what the policy answered, so the tests pin the text of a
line, the redaction of every secret-carrying key, the cut limits at their
boundary, the entries kept in memory and the accounting of write failures.
"""

from __future__ import annotations

import locale
import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hugind.policy import AuditLog

TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00")


def test_a_decision_is_one_line_with_the_documented_fields_in_order(tmp_path):
    log = tmp_path / "audit.jsonl"
    before = datetime.now(UTC)
    with AuditLog(log) as audit:
        entry = audit.write(
            "filesystem",
            {"op": "read_text", "path": "données/é.txt", "zeta": 1, "alpha": [True, None, 1.5]},
            False,
            "filesystem.outside-roots",
        )
    after = datetime.now(UTC)
    ts = entry["ts"]
    assert TS.fullmatch(ts), ts
    assert before.replace(microsecond=before.microsecond // 1000 * 1000) <= datetime.fromisoformat(ts) <= after
    # Non-ASCII stays readable (not \u escapes); the keys keep the documented order, the request its own.
    assert log.read_text(encoding="utf-8") == (
        f'{{"ts": "{ts}", "capability": "filesystem", "op": "read_text", '
        '"request": {"op": "read_text", "path": "données/é.txt", "zeta": 1, "alpha": [true, null, 1.5]}, '
        '"decision": "deny", "rule": "filesystem.outside-roots"}\n'
    )
    assert list(audit.entries) == [entry]


def test_a_new_log_appends_to_the_lines_already_there(tmp_path):
    log = tmp_path / "audit.jsonl"
    log.write_text('{"earlier": "run"}\n')
    with AuditLog(log) as audit:
        audit.write("shell", {"op": "run"}, True, "shell.allow")
    first, second = log.read_text().splitlines()
    assert first == '{"earlier": "run"}' and '"decision": "allow", "rule": "shell.allow"}' in second


def test_the_file_is_utf8_whatever_the_locale_says(tmp_path):
    """A run under LANG=C still writes a UTF-8 log (a locale codec could not even encode é)."""
    log = tmp_path / "audit.jsonl"
    saved = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        with AuditLog(log) as audit:
            audit.write("filesystem", {"op": "stat", "path": "é"}, True, "filesystem.read:.")
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)
    assert '"path": "é"' in log.read_bytes().decode("utf-8")


def test_a_request_without_an_op_is_recorded_with_an_empty_op(tmp_path):
    with AuditLog(tmp_path / "audit.jsonl") as audit:
        assert audit.write("network", {"url": "http://127.0.0.1/"}, True, "network.allow")["op"] == ""
    memory = AuditLog()
    memory.note("network", {"url": "http://127.0.0.1/"}, False, "network.allow")
    assert memory.entries[0]["op"] == "" and memory.entries[0]["decision"] == "deny"


@pytest.mark.parametrize("key", ["env", "ENV", "environ", "Environ", "environment", "ENVIRONMENT"])
def test_every_environment_key_is_redacted_whatever_its_case(key):
    audit = AuditLog()
    entry = audit.write("shell", {"op": "spawn", key: {"TOKEN": "s3cret"}, "args": ["a"]}, True, "shell.allow")
    assert entry["request"] == {"op": "spawn", key: "<redacted>", "args": ["a"]}


def test_nested_environments_and_credential_headers_are_masked():
    audit = AuditLog()
    request = {
        "op": "fetch",
        "headers": {
            "Authorization": "Bearer t",
            "PROXY-AUTHORIZATION": "Basic x",
            "Cookie": "c=1",
            "Set-Cookie": "c=2",
            "X-Api-Key": "k1",
            "api-key": "k2",
            "Accept": "text/plain",
        },
        "child": {"environ": ["A=1"], "headers": {"cookie": "c"}, "note": "kept"},
    }
    entry = audit.write("network", request, True, "network.allow")
    masked = dict.fromkeys(("Authorization", "PROXY-AUTHORIZATION", "Cookie", "Set-Cookie", "X-Api-Key", "api-key"))
    assert entry["request"] == {
        "op": "fetch",
        "headers": {**{k: "<redacted>" for k in masked}, "Accept": "text/plain"},
        "child": {"environ": "<redacted>", "headers": {"cookie": "<redacted>"}, "note": "kept"},
    }


def test_strings_are_cut_after_exactly_1000_characters():
    audit = AuditLog()
    request = {"op": "run", "exact": "a" * 1000, "over": "b" * 1001, "long": "c" * 5000}
    got = audit.write("shell", request, True, "shell.allow")["request"]
    assert got["exact"] == "a" * 1000
    assert got["over"] == "b" * 1000 + "...(+1 chars)"
    assert got["long"] == "c" * 1000 + "...(+4000 chars)"


def test_lists_keep_their_first_100_items_and_tuples_become_lists():
    audit = AuditLog()
    got = audit.write("shell", {"op": "spawn", "args": list(range(150)), "pair": (1, "x")}, True, "r")["request"]
    assert got["args"] == list(range(100)) and got["pair"] == [1, "x"]
    assert audit.write("shell", {"op": "spawn", "args": list(range(100))}, True, "r")["request"]["args"] == list(
        range(100)
    )


def test_values_json_cannot_hold_become_their_text_and_json_values_stay(tmp_path):
    with AuditLog(tmp_path / "audit.jsonl") as audit:
        entry = audit.write(
            "filesystem",
            {"op": "copy", "src": Path("/a/b"), "dst": None, "n": 3, "f": 0.5, "ok": False, "raw": b"x"},
            True,
            "r",
        )
    assert entry["request"] == {"op": "copy", "src": "/a/b", "dst": None, "n": 3, "f": 0.5, "ok": False, "raw": "b'x'"}
    assert (
        '"src": "/a/b", "dst": null, "n": 3, "f": 0.5, "ok": false, "raw": "b\'x\'"'
        in (tmp_path / "audit.jsonl").read_text()
    )


def test_entries_are_read_by_index_and_by_slice_oldest_first():
    audit = AuditLog(keep=3)
    for i in range(5):
        audit.note("filesystem", {"op": "stat", "i": i}, i % 2 == 0, f"rule{i}")
    assert len(audit.entries) == 3
    assert audit.entries[0]["request"] == {"op": "stat", "i": 2} and audit.entries[0]["rule"] == "rule2"
    assert audit.entries[-1]["request"]["i"] == 4 and audit.entries[-1]["decision"] == "allow"
    assert [e["request"]["i"] for e in audit.entries[1:]] == [3, 4]
    assert [e["decision"] for e in audit.entries[:]] == ["allow", "deny", "allow"]
    with pytest.raises(IndexError):
        audit.entries[3]


def test_a_noted_request_is_copied_when_noted():
    audit = AuditLog()
    request = {"op": "stat", "path": "a"}
    audit.note("filesystem", request, True, "r")
    request["path"] = "changed later"
    assert audit.entries[0]["request"] == {"op": "stat", "path": "a"}


def test_by_default_the_last_ten_thousand_decisions_are_kept():
    audit = AuditLog()
    for i in range(10_001):
        audit.note("filesystem", {"op": "stat", "i": i}, True, "r")
    assert len(audit.entries) == 10_000
    assert audit.entries[0]["request"]["i"] == 1 and audit.entries[-1]["request"]["i"] == 10_000


def test_a_log_that_writes_fine_counts_no_error(tmp_path):
    audit = AuditLog(tmp_path / "audit.jsonl")
    assert audit.write_errors == 0
    audit.write("shell", {"op": "run"}, True, "r")
    audit.close()
    assert audit.write_errors == 0 and AuditLog().write_errors == 0


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full to make writes fail")
def test_failed_writes_are_counted_kept_in_memory_and_never_raise():
    """A full disk: each decision is still kept and counted as a write error, the run goes on,
    and closing the log (whose last flush fails too) does not raise either."""
    audit = AuditLog("/dev/full")
    assert audit.write_errors == 0
    audit.write("shell", {"op": "run"}, True, "r")
    audit.note("shell", {"op": "run"}, False, "r")
    assert audit.write_errors == 2
    assert [e["decision"] for e in audit.entries] == ["allow", "deny"]
    audit.close()
    assert audit.write_errors == 3  # the final flush of the unwritten lines failed as well
    audit.write("shell", {"op": "run"}, True, "r")  # after close: memory only
    assert audit.write_errors == 3 and len(audit.entries) == 3


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_close_releases_the_file_and_later_decisions_stay_in_memory(tmp_path):
    log = tmp_path / "audit.jsonl"
    before = _open_fds()
    audit = AuditLog(log)
    assert len(_open_fds() - before) == 1
    audit.write("filesystem", {"op": "stat"}, True, "r")
    audit.close()
    assert _open_fds() - before == set()
    audit.write("filesystem", {"op": "stat"}, False, "r")
    audit.note("filesystem", {"op": "stat"}, False, "r")
    audit.close()  # twice is fine
    assert len(log.read_text().splitlines()) == 1
    assert [e["decision"] for e in audit.entries] == ["allow", "deny", "deny"]
