"""Kept vs fresh instances, and the raw host-import path vs wasmtime-py's public API:
each pair runs the same agents (tests/differential/agents.py) in its own process, every
case four times, and every run must give the same exit status, stdout, stderr and audit
log, byte for byte (the audit log's "ts" alone is normalised).

* kept: hugind as shipped (recycle.py keeps the JS engine's instances; the raw path);
* fresh: ``HUGIND_RECYCLE=0``, every run instantiates (still the raw path);
* public: ``HUGIND_RAW_FFI=0``, wasmtime-py's public API for every import and export
  call (which keeps nothing either).
"""

from __future__ import annotations

from tests.differential.agents import describe, normalise


def _compare(a: dict, b: dict, names: tuple[str, str]) -> None:
    assert a["runs"].keys() == b["runs"].keys()
    for case, runs in a["runs"].items():
        for i, (left, right) in enumerate(zip(runs, b["runs"][case], strict=True)):
            left, right = normalise(left), normalise(right)
            assert left == right, f"{case} run {i}: {names[0]} {describe(left)}\n{names[1]} {describe(right)}"


def test_the_runs_really_took_the_paths_compared(drive, cases):
    kept, fresh, public = drive("kept"), drive("fresh", HUGIND_RECYCLE="0"), drive("public", HUGIND_RAW_FFI="0")
    js_runs = sum(1 for case in cases if "wat" not in case["name"] and "wasm" not in case["name"]) * 4
    assert kept["raw"] and fresh["raw"] and not public["raw"]
    # Most JS runs started on a kept instance (not the process's first two, nor one after
    # runs that were stopped, whose instances are dropped).
    assert kept["kept_runs"] >= js_runs * 2 // 3, (kept["kept_runs"], js_runs)
    assert fresh["kept_runs"] == 0 and public["kept_runs"] == 0
    # Sanity: the agents did what they were written to do (a broken set-up compares nothing).
    first = {case: runs[0] for case, runs in kept["runs"].items()}
    assert first["hello"]["code"] == 0 and "Hello, differential world!" in first["hello"]["stdout"]
    assert '"deny"' in first["js-files-denied"]["audit"] and "files: start" in first["js-files-denied"]["stderr"]
    assert first["js-throws"]["code"] == 1 and "the agent gave up" in first["js-throws"]["stderr"]
    assert first["wat-command-exit-3"]["stdout"].startswith("out: raw agent\n")
    assert "status 3" in first["wat-command-exit-3"]["stderr"]
    late = first["js-llm-past-deadline"]
    assert late["code"] == 4 and "deadline" in late["stderr"], late
    agentic = first["agentic-tool"]["stdout"]
    assert agentic.startswith('"done: echoed ') and "xyz" in agentic, agentic


def test_kept_instances_give_what_fresh_ones_give(drive):
    _compare(drive("kept"), drive("fresh", HUGIND_RECYCLE="0"), ("kept", "fresh"))


def test_every_run_of_a_case_gives_the_same_whichever_instance_it_started_on(drive):
    # Within the kept process: the first runs instantiated, the later ones started on
    # instances other agents' runs had used.
    for case, runs in drive("kept")["runs"].items():
        first = normalise(runs[0])
        for i, run in enumerate(runs[1:], start=1):
            assert normalise(run) == first, f"{case} run {i} vs run 0: {describe(normalise(run))}"


def test_the_raw_import_path_gives_what_wasmtimes_public_api_gives(drive):
    _compare(drive("fresh", HUGIND_RECYCLE="0"), drive("public", HUGIND_RAW_FFI="0"), ("raw", "public"))
