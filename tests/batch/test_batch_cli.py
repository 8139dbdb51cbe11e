"""``hugind batch`` through the real CLI: many items, failures, hangs, order, exit codes, --json."""

from __future__ import annotations

import json

import pytest

from hugind.errors import ExitCode
from tests.batch.helpers import ECHO_JS, ECHO_MANIFEST, events, read_results, write_inputs
from tests.conftest import run_cli

N = 60
FAILING = {i for i in range(N) if i % 10 == 3}
SPINS, WAITS = 17, 41  # a busy loop and a wait on a 60 s timer, both past --timeout 1


def _args(i: int) -> list[str]:
    if i in FAILING:
        return ["fail", f"n{i}"]
    if i == SPINS:
        return ["spin"]
    if i == WAITS:
        return ["wait"]
    return [f"n{i}", "x y"]


@pytest.fixture
def echo(make_agent):
    return make_agent({"main.js": ECHO_JS}, ECHO_MANIFEST)


def test_sixty_items_with_failures_and_hangs_all_come_back_in_order(echo, tmp_path):
    inputs = write_inputs(tmp_path / "in.jsonl", [{"id": f"item-{i}", "args": _args(i)} for i in range(N)])
    out = tmp_path / "out.jsonl"
    res = run_cli("batch", str(echo), str(inputs), "--out", str(out), "--timeout", "1", "-j", "2", "--json")
    assert res.code == ExitCode.AGENT_FAILED, res.stderr  # some items failed: the batch says so
    results = read_results(out.read_text())
    assert [r["id"] for r in results] == [f"item-{i}" for i in range(N)]
    assert [r["index"] for r in results] == list(range(N))
    assert [r["line"] for r in results] == list(range(1, N + 1))
    for i, r in enumerate(results):
        if i in FAILING:
            assert (r["status"], r["exit_code"], r["result"]) == ("failed", ExitCode.AGENT_FAILED, None)
            assert r["error"].startswith(f"Error: asked to fail: n{i}")
        elif i in (SPINS, WAITS):
            assert (r["status"], r["exit_code"]) == ("timeout", ExitCode.LIMIT_EXCEEDED)
            assert "wall-clock deadline" in r["error"]
            assert 0.9 < r["elapsed_s"] < 30
        else:
            assert (r["status"], r["exit_code"], r["error"]) == ("ok", 0, None)
            assert r["result"] == {"args": [f"n{i}", "x y"], "env": {}}
            assert r["stdout"] == f"echo n{i} x y\n"
    seen = events(res.stderr)
    assert seen[0] == {"event": "started", "items": N, "skipped": 0, "concurrency": 2}
    done = [e for e in seen if e["event"] == "item_done"]
    assert sorted(e["index"] for e in done) == list(range(N))
    assert [e["done"] for e in done] == list(range(1, N + 1))
    assert seen[-1]["event"] == "finished"
    expected = {"ok": N - len(FAILING) - 2, "failed": len(FAILING), "timeout": 2, "error": 0, "skipped": 0}
    assert {k: seen[-1][k] for k in expected} == expected
    assert len(seen) == N + 2  # nothing else on stderr parses as an event


def test_an_item_exits_with_the_code_and_message_hugind_run_would(echo, tmp_path):
    single = run_cli("run", str(echo), "--", "fail", "same")
    inputs = write_inputs(tmp_path / "in.jsonl", [{"args": ["fail", "same"]}])
    res = run_cli("batch", str(echo), str(inputs))
    (result,) = read_results(res.stdout)
    assert result["exit_code"] == single.code == ExitCode.AGENT_FAILED
    assert single.stderr.startswith(f"hugind: error: {result['error']}")
    assert res.code == ExitCode.AGENT_FAILED


def test_all_ok_exits_0_and_results_go_to_stdout_alone(echo, tmp_path):
    inputs = write_inputs(tmp_path / "in.jsonl", [{"args": [str(i)]} for i in range(5)])
    res = run_cli("batch", str(echo), str(inputs), "-j", "1")
    assert res.code == 0, res.stderr
    results = read_results(res.stdout)
    assert [r["id"] for r in results] == ["1", "2", "3", "4", "5"]  # default id: the line number
    assert all(r["status"] == "ok" for r in results)
    assert res.stderr == ""  # no progress bar: stderr is not a terminal


def test_malformed_lines_fail_alone_with_their_line_number(echo, tmp_path):
    lines = [
        {"id": "good-1", "args": ["a"]},
        "not json at all",
        "",  # blank: skipped, takes no index
        "[1, 2]",
        {"id": "a", "args": [1]},
        {"id": "b", "args": ["x"], "extra": 1},
        {"id": "c", "env": {"GREETING": 5}},
        {"id": True},
        {"id": "good-1", "args": ["again"]},
        {"id": "good-2", "args": ["b"]},
    ]
    res = run_cli("batch", str(echo), str(write_inputs(tmp_path / "in.jsonl", lines)))
    assert res.code == ExitCode.AGENT_FAILED
    assert "Traceback" not in res.stderr
    results = read_results(res.stdout)
    assert [r["index"] for r in results] == list(range(9))
    by_line = {r["line"]: r for r in results}
    assert by_line[1]["status"] == by_line[10]["status"] == "ok"
    assert by_line[10]["result"]["args"] == ["b"]
    expected_errors = {
        2: "input line 2: not valid JSON",
        4: "input line 4: expected a JSON object, got an array",
        5: "input line 5: 'args' must be a list of strings",
        6: "input line 6: unknown key 'extra'",
        7: "input line 7: 'env' must be an object of names to string values",
        8: "input line 8: 'id' must be a string or a whole number, got a boolean",
        9: "input line 9: duplicate id 'good-1' (first on line 1)",
    }
    for line, message in expected_errors.items():
        assert by_line[line]["status"] == "error", by_line[line]
        assert by_line[line]["exit_code"] == ExitCode.USAGE
        assert by_line[line]["error"].startswith(message)
    assert 3 not in by_line


def test_a_line_nested_too_deep_fails_alone(echo, tmp_path):
    """Before: 200,000 nested '[' on one line ended the whole batch in a RecursionError traceback."""
    deep = "[" * 200_000 + "]" * 200_000
    lines = [deep, '{"args": ' + deep + "}", {"args": ["fine"]}]
    res = run_cli("batch", str(echo), str(write_inputs(tmp_path / "in.jsonl", lines)))
    assert res.code == ExitCode.AGENT_FAILED and "Traceback" not in res.stderr, res.stderr[-2000:]
    first, second, third = read_results(res.stdout)
    for broken, line in ((first, 1), (second, 2)):
        assert broken["status"] == "error"
        assert broken["error"] == f"input line {line}: not valid JSON (nested deeper than 256 levels)"
    assert third["status"] == "ok"


def test_env_overrides_follow_the_manifest(make_agent, tmp_path):
    manifest = {**ECHO_MANIFEST, "env": {"GREETING": {"required": True}, "TOKEN": {}}}
    agent = make_agent({"main.js": ECHO_JS}, manifest)
    lines = [
        {"id": "declared", "env": {"GREETING": "hello", "TOKEN": "t1"}},
        {"id": "undeclared", "env": {"GREETING": "hello", "SECRET": "s"}},
        {"id": "missing-required", "env": {"TOKEN": "t2"}},
        {"id": "from-host", "env": {"GREETING": "hi"}},
    ]
    host = {"TOKEN": "host-token", "SECRET": "host-secret"}
    res = run_cli("batch", str(agent), str(write_inputs(tmp_path / "in.jsonl", lines)), env=host)
    by_id = {r["id"]: r for r in read_results(res.stdout)}
    assert by_id["declared"]["result"]["env"] == {"GREETING": "hello", "TOKEN": "t1"}
    assert by_id["undeclared"]["status"] == "error" and by_id["undeclared"]["exit_code"] == ExitCode.USAGE
    assert "SECRET" in by_id["undeclared"]["error"] and "not declared" in by_id["undeclared"]["error"]
    assert by_id["missing-required"]["status"] == "error"
    assert by_id["missing-required"]["error"] == "required environment variable not set: GREETING"
    # The host's declared TOKEN passes as in `hugind run`; its undeclared SECRET never does.
    assert by_id["from-host"]["result"]["env"] == {"GREETING": "hi", "TOKEN": "host-token"}
    assert "host-secret" not in res.stdout


def test_strict_fails_only_the_item_with_a_denial_and_audits_it(echo, tmp_path):
    lines = [{"id": "plain", "args": ["a"]}, {"id": "peeks", "args": ["peek"]}, {"id": "plain-2", "args": ["b"]}]
    audit = tmp_path / "audit.jsonl"
    inputs = write_inputs(tmp_path / "in.jsonl", lines)
    res = run_cli("batch", str(echo), str(inputs), "--strict", "--audit", str(audit))
    assert res.code == ExitCode.AGENT_FAILED
    by_id = {r["id"]: r for r in read_results(res.stdout)}
    assert by_id["peeks"]["status"] == "failed"
    assert by_id["peeks"]["exit_code"] == ExitCode.POLICY_DENIED
    assert by_id["peeks"]["denials"] == 1 and "--strict" in by_id["peeks"]["error"]
    assert by_id["peeks"]["result"] == "caught PermissionDenied"  # printed by `hugind run --strict` too
    assert by_id["plain"]["status"] == by_id["plain-2"]["status"] == "ok"
    denied = [json.loads(line) for line in audit.read_text().splitlines()]
    denied = [e for e in denied if e["decision"] == "deny"]
    assert len(denied) == 1 and denied[0]["item"] == "peeks"
    assert (denied[0]["op"], denied[0]["request"]["path"]) == ("read_text", "/etc/hostname")
    # Without --strict the same agent copes with the denial and the item is ok.
    lenient = run_cli("batch", str(echo), str(inputs))
    assert lenient.code == 0
    peeks = next(r for r in read_results(lenient.stdout) if r["id"] == "peeks")
    assert (peeks["result"], peeks["denials"]) == ("caught PermissionDenied", 1)


def test_bad_usage_is_one_line_and_exit_2(echo, tmp_path):
    inputs = write_inputs(tmp_path / "in.jsonl", [{"args": []}])
    cases = [
        ("batch", str(tmp_path / "nope"), str(inputs)),
        ("batch", str(echo), str(tmp_path / "missing.jsonl")),
        ("batch", str(echo), str(inputs), "--concurrency", "0"),
        ("batch", str(echo), str(inputs), "--resume", str(tmp_path / "a"), "--out", str(tmp_path / "b")),
    ]
    for args in cases:
        res = run_cli(*args)
        assert res.code == ExitCode.USAGE, (args, res.stderr)
        assert res.stderr.startswith("hugind: error: ") and res.stderr.count("\n") == 1, res.stderr
        assert res.stdout == ""
