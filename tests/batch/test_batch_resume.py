"""``--resume OUT``: the items already in OUT are skipped; a torn last line is cut and its item re-run."""

from __future__ import annotations

from hugind.batch.output import read_done
from tests.batch.helpers import ECHO_JS, ECHO_MANIFEST, events, read_results, write_inputs
from tests.conftest import run_cli

N = 20


def test_resume_runs_only_the_items_missing_from_out(make_agent, tmp_path):
    agent = make_agent({"main.js": ECHO_JS}, ECHO_MANIFEST)
    lines = [{"id": f"r{i}", "args": ["fail"] if i == 5 else [str(i)]} for i in range(N)]
    inputs = write_inputs(tmp_path / "in.jsonl", lines)
    out = tmp_path / "out.jsonl"
    first = run_cli("batch", str(agent), str(inputs), "--out", str(out), "-j", "2")
    assert first.code == 1
    complete = out.read_text().splitlines(keepends=True)
    assert len(complete) == N
    # A crash after 15 lines, in the middle of writing the 16th:
    out.write_text("".join(complete[:15]) + complete[15][:40])

    again = run_cli("batch", str(agent), str(inputs), "--resume", str(out), "--json")
    assert again.code == 1  # item r5 failed in the first run and stays failed: the batch is not all ok
    seen = events(again.stderr)
    assert seen[0] == {"event": "started", "items": 5, "skipped": 15, "concurrency": 2}
    assert sorted(e["id"] for e in seen if e["event"] == "item_done") == [f"r{i}" for i in range(15, N)]
    results = read_results(out.read_text())
    assert [r["id"] for r in results] == [f"r{i}" for i in range(N)]  # each once, in order, nothing torn
    assert [r["result"] for r in results[15:]] == [r["result"] for r in read_results("".join(complete[15:]))]

    before = out.read_text()
    finished = run_cli("batch", str(agent), str(inputs), "--resume", str(out), "--json")
    assert events(finished.stderr)[0]["items"] == 0
    assert out.read_text() == before  # nothing left to run: nothing appended


def test_resume_of_all_ok_items_exits_0(make_agent, tmp_path):
    agent = make_agent({"main.js": ECHO_JS}, ECHO_MANIFEST)
    inputs = write_inputs(tmp_path / "in.jsonl", [{"args": [str(i)]} for i in range(4)])
    out = tmp_path / "out.jsonl"  # does not exist yet: --resume starts the batch
    assert run_cli("batch", str(agent), str(inputs), "--resume", str(out)).code == 0
    assert len(read_results(out.read_text())) == 4


def test_read_done_cuts_only_a_torn_tail(tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_text('{"id": "a", "status": "ok"}\n{"id": "b", "status": "failed"}\n{"id": "c", "sta')
    done = read_done(out)
    assert done.statuses == {"a": "ok", "b": "failed"}
    assert done.torn_bytes == len('{"id": "c", "sta')
    assert out.read_text().endswith('"failed"}\n')


def test_resume_refuses_a_file_that_is_not_batch_results(make_agent, tmp_path):
    agent = make_agent({"main.js": ECHO_JS}, ECHO_MANIFEST)
    inputs = write_inputs(tmp_path / "in.jsonl", [{"args": []}])
    out = tmp_path / "notes.txt"
    out.write_text("my notes\nmore notes\n")
    res = run_cli("batch", str(agent), str(inputs), "--resume", str(out))
    assert res.code == 2
    assert res.stderr == f"hugind: error: {out} line 1 is not a hugind batch result; not resuming from it\n"
    assert out.read_text() == "my notes\nmore notes\n"  # left as it was
