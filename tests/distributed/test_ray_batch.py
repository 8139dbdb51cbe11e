"""``hugind batch --ray``: the same results file and audit file as a local batch, on a local Ray instance."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hugind.errors import ExitCode
from tests.batch.helpers import ECHO_JS, ECHO_MANIFEST, read_results, write_inputs
from tests.conftest import run_cli

pytestmark = pytest.mark.ray

LINES: list[Any] = [
    {"id": "plain", "args": ["a", "b c"]},
    {"id": "fails", "args": ["fail", "now"]},
    {"id": "greets", "args": ["g"], "env": {"GREETING": "hi"}},
    {"id": "undeclared", "args": ["u"], "env": {"HOME_SECRET": "x"}},
    "not json",
    {"id": "peeks", "args": ["peek"]},
    {"id": "spins", "args": ["spin"]},
    {"id": "last", "args": ["z"]},
]
# The preset tightens the run time to 1 s: the spinning item times out in the sandbox itself.
# Its fuel is set far past what 1 s can burn: --strict's default (1e10) lets a spin on a
# loaded machine, whose deadline is seen late, run out of fuel first on one side only.
PRESET = "permissions:\n  limits:\n    timeout: 1\n    fuel: 1000000000000\n"


@pytest.fixture
def echo(make_agent):
    return make_agent({"main.js": ECHO_JS, "data/notes.txt": "shipped with the agent"}, ECHO_MANIFEST)


def _results(path: Path) -> list[dict[str, Any]]:
    results = read_results(path.read_text())
    for r in results:
        assert r.pop("elapsed_s") >= 0
    return results


def _audit(path: Path) -> list[dict[str, Any]]:
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    for e in entries:
        assert e.pop("ts")
    return sorted(entries, key=lambda e: (e["item"], json.dumps(e, sort_keys=True)))


def test_a_batch_on_ray_writes_the_same_results_and_audit_as_locally(echo, tmp_path, ray_address):
    inputs = write_inputs(tmp_path / "in.jsonl", LINES)
    preset = tmp_path / "tight.yaml"
    preset.write_text(PRESET)
    flags = ["--strict", "--policy", str(preset), "-j", "2"]
    driver_env = {"TOKEN": "driver-secret"}  # declared by the agent, but only the local run may pass it

    def batch(name: str, *extra: str) -> Any:
        out, audit = str(tmp_path / f"{name}.jsonl"), str(tmp_path / f"{name}.audit")
        args = ["batch", str(echo), str(inputs), "--out", out, "--audit", audit, *flags, *extra]
        return run_cli(*args, env=driver_env, timeout=180)

    local = batch("local")
    on_ray = batch("ray", "--ray", ray_address)
    assert local.code == on_ray.code == ExitCode.AGENT_FAILED, on_ray.stderr
    local_results, ray_results = _results(tmp_path / "local.jsonl"), _results(tmp_path / "ray.jsonl")
    by_id = {r["id"]: r for r in ray_results}
    # What the driver's environment gave the local items, and only that, differs:
    assert [r["result"]["env"] for r in local_results if r["id"] in ("plain", "last")] == [
        {"TOKEN": "driver-secret"}
    ] * 2
    assert by_id["plain"]["result"] == {"args": ["a", "b c"], "env": {}}
    for r in local_results:
        if isinstance(r["result"], dict):
            r["result"]["env"].pop("TOKEN", None)
    assert ray_results == local_results
    # and the results are what they should be, not merely equal
    assert [r["status"] for r in ray_results] == ["ok", "failed", "ok", "error", "error", "failed", "timeout", "ok"]
    assert by_id["greets"]["result"]["env"] == {"GREETING": "hi"}
    assert by_id["undeclared"]["error"].startswith("env override of HOME_SECRET: not declared")
    assert (by_id["peeks"]["exit_code"], by_id["peeks"]["denials"]) == (ExitCode.POLICY_DENIED, 1)
    assert "wall-clock deadline" in by_id["spins"]["error"]
    assert by_id["plain"]["stdout"] == "echo a b c\n"
    ray_audit = _audit(tmp_path / "ray.audit")
    assert ray_audit == _audit(tmp_path / "local.audit")
    assert [(e["item"], e["op"]) for e in ray_audit if e["decision"] == "deny"] == [("peeks", "read_text")]
    assert "driver-secret" not in (tmp_path / "ray.jsonl").read_text() + (tmp_path / "ray.audit").read_text()


def test_resume_on_ray_runs_only_the_missing_items(echo, tmp_path, ray_address):
    inputs = write_inputs(tmp_path / "in.jsonl", [{"id": f"r{i}", "args": [str(i)]} for i in range(8)])
    out = tmp_path / "out.jsonl"
    first = run_cli("batch", str(echo), str(inputs), "--out", str(out), "--ray", ray_address, timeout=180)
    assert first.code == 0, first.stderr
    complete = out.read_text().splitlines(keepends=True)
    out.write_text("".join(complete[:5]) + complete[5][:20])  # a crash while writing the sixth line
    again = run_cli("batch", str(echo), str(inputs), "--resume", str(out), "--json", "--ray", ray_address, timeout=180)
    assert again.code == 0, again.stderr
    ran = [json.loads(line)["id"] for line in again.stderr.splitlines() if '"item_done"' in line]
    assert sorted(ran) == ["r5", "r6", "r7"]
    assert [r["id"] for r in read_results(out.read_text())] == [f"r{i}" for i in range(8)]
    assert [r["result"]["args"] for r in read_results(out.read_text())] == [[str(i)] for i in range(8)]


def test_batch_without_ray_installed_is_a_one_line_usage_error(echo, tmp_path):
    import subprocess
    import sys

    from tests.conftest import REPO
    from tests.distributed.test_ray_cli import NO_RAY

    inputs = write_inputs(tmp_path / "in.jsonl", [{"args": ["a"]}])
    out = tmp_path / "out.jsonl"
    res = subprocess.run(
        [sys.executable, "-c", NO_RAY, "batch", str(echo), str(inputs), "--out", str(out), "--ray"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (res.returncode, res.stderr) == (2, "hugind: error: --ray needs Ray: pip install 'hugind[ray]'\n")
    assert not out.exists()


def test_a_guest_trap_on_a_ray_worker_is_a_trap_not_a_crash(tmp_path, ray_address):
    # wasmtime and Ray both handle SIGILL/SIGSEGV: a guest's `unreachable` on a worker
    # must end its item with exit 5, as locally, never kill the worker.
    import wasmtime

    module = tmp_path / "trap.wasm"
    module.write_bytes(wasmtime.wat2wasm('(module (memory (export "memory") 1) (func (export "_start") unreachable))'))
    inputs = tmp_path / "in.jsonl"
    write_inputs(inputs, [{"id": "one"}, {"id": "two"}])
    local = run_cli("batch", str(module), str(inputs), "--out", str(tmp_path / "local.jsonl"), timeout=180)
    on_ray = run_cli(
        "batch", str(module), str(inputs), "--out", str(tmp_path / "ray.jsonl"), "--ray", ray_address, timeout=180
    )
    assert local.code == on_ray.code == 1, on_ray.stderr
    for name in ("local.jsonl", "ray.jsonl"):
        results = _results(tmp_path / name)
        assert [(r["id"], r["exit_code"]) for r in results] == [("one", ExitCode.TRAP), ("two", ExitCode.TRAP)]
        assert all("wasm trap" in r["error"] for r in results), results
