"""A cold ``hugind run`` imports only what the run needs, and the CLI still parses as Typer does.

No timing here (the machine is shared and noisy; bench/startup.py prints the
ratios): the guard is which modules a real ``hugind run`` process has loaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import typer.main

import hugind.cli
from tests.conftest import REPO

# Imported by no step of a script agent's run: the LLM client's HTTP stack, Typer's
# pretty output and pydantic-based conversion, MCP, the commands a run is not, and
# what only some runs need (network and shell rules, the artifact decoder, the wasm
# binary reader behind snapshots, a built artifact's digest).
HEAVY = (
    "httpx",
    "rich",
    "pydantic",
    "typer",
    "click",
    "typer._adapters",
    "mcp",
    "hugind.mcp",
    "hugind.team",
    "hugind.agentic",
    "hugind.build",
    "hugind.batch",
    "hugind.replay",
    "hugind.learn",
    "hugind.sessions",
    "hugind.permdiff",
    "hugind.distributed",
    "hugind.confine.proxy",
    "hugind.llm.client",
    "hugind.policy.net",
    "hugind.policy.shell",
    "hugind.policy.describe",
    "hugind.policy.host_rules",
    "hugind.artifact",
    "hugind.wasm.binary",
    "socket",
    "uuid",
    "difflib",
    "hashlib",  # OpenSSL: the module cache's key takes CPython's own SHA-256 (hugind.sha256)
    "tempfile",  # with shutil, random, bz2, lzma: only a run that makes or removes a directory
    "shutil",
    "subprocess",  # with signal: the shell host ops import them at a run's first command
    "signal",
)

_PROBE = """
import atexit, gc, json, os, sys
preloaded = set(sys.modules)  # the interpreter's and its site's (a .pth may import tempfile): not hugind's
import threading  # its exit callbacks run when the interpreter shuts down, and only then:
threading._register_atexit(os.write, 2, b"\\nTORN DOWN\\n")
import hugind.run_command
from hugind.entry import main
argv, heavy = json.loads(sys.argv[1]), json.loads(sys.argv[2])
sys.argv = ["hugind", *argv]
at_run = None
run_command = hugind.run_command.run_command
def spy(args):
    global at_run
    at_run = {"collector_on": gc.isenabled(), "frozen": gc.get_freeze_count()}
    return run_command(args)
hugind.run_command.run_command = spy
def report():  # main() may end the process itself: the report is an exit handler
    loaded = [m for m in heavy if m in sys.modules and m not in preloaded]
    report = {"loaded": loaded, "frozen": gc.get_freeze_count(), "at_run": at_run}
    sys.stderr.write("\\nPROBE " + json.dumps(report) + "\\n")
atexit.register(report)
main()
"""


@pytest.fixture(scope="module", autouse=True)
def _engine_cached() -> None:
    """The first run on an empty cache snapshots the engine, and that loads the wasm
    binary reader: the probes measure the everyday run, so the cache is filled first."""
    warm = [sys.executable, "-m", "hugind", "run", "examples/hello"]
    for extra in ([], ["--fuel", "100000000"]):  # fuel metering is a module of its own
        subprocess.run([*warm, *extra], cwd=REPO, capture_output=True, timeout=300)


def _probe(argv: list[str]) -> tuple[subprocess.CompletedProcess[str], dict]:
    """Run ``hugind ARGV`` in a fresh interpreter: which of HEAVY it imported, how many
    objects main() froze out of the shutdown collections, (quick path) the collector's
    state when the run began, and whether the interpreter's shutdown ran."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(argv), json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        env={**os.environ, "HUGIND_WARM": "0"},  # the probe watches this process: a cold run
    )
    marker = [line for line in proc.stderr.splitlines() if line.startswith("PROBE ")]
    assert marker, proc.stderr
    report = json.loads(marker[-1][len("PROBE ") :])
    report["torn_down"] = "TORN DOWN" in proc.stderr.splitlines()
    return proc, report


def test_a_script_agent_run_imports_nothing_heavy(tmp_path):
    agent = tmp_path / "agent.js"
    agent.write_text("export default (input) => ({ got: input.args });")
    proc, report = _probe(["run", str(agent), "--fuel", "100000000", "--timeout", "30", "--", "x"])
    assert json.loads(proc.stdout) == {"got": ["x"]}, proc.stderr
    assert report["loaded"] == []
    assert report["frozen"] > 10_000  # the imports' objects, left out of the shutdown collections


def test_the_run_starts_with_its_imports_frozen_and_the_collector_on(tmp_path):
    agent = tmp_path / "agent.js"
    agent.write_text("export default () => 1;")
    proc, report = _probe(["run", str(agent)])
    assert proc.stdout == "1\n", proc.stderr
    # On: an agent's long run must have its garbage collected. Frozen: the start-up
    # stack (wasmtime's bindings, the policy, ...) is out of every collection.
    assert report["at_run"]["collector_on"] is True
    assert report["at_run"]["frozen"] > 10_000


@pytest.mark.parametrize(
    ("source", "rules"),
    [
        (
            "export default async () => { try { http_get('http://127.0.0.1:9/'); } catch (e) { return String(e); } };",
            "hugind.policy.net",
        ),
        (
            "export default async () => { try { await run_command('true'); } catch (e) { return String(e); } };",
            "hugind.policy.shell",
        ),
    ],
    ids=["network", "shell"],
)
def test_rules_loaded_on_first_use_still_deny(tmp_path, source, rules):
    # The network and shell rules are imported by the first check that needs them:
    # that check must still happen, and deny what the (empty) policy does not allow.
    agent = tmp_path / "agent.js"
    agent.write_text(source)
    proc, report = _probe(["run", str(agent)])
    assert proc.returncode == 0, proc.stderr
    assert "denied" in json.loads(proc.stdout).lower(), proc.stdout
    assert rules in report["loaded"]


# What the agent does: a large result (many pipe buffers), a line on stderr, a denial
# (an audit entry and the hints printed after the run), then how it ends.
_ENDINGS = {
    "result": 'return "x".repeat(300000);',
    "throw": 'throw new Error("boom");',
    "set_result": "set_result({ n: 1 }); return 2;",
}


def _agent_ending(tmp_path, ending: str):
    agent = tmp_path / "agent.js"
    agent.write_text(
        "export default () => {\n"
        '  try { fs.read_text("/etc/hostname"); } catch (e) {}\n'
        '  eprint("to stderr");\n'
        f"  {_ENDINGS[ending]}\n"
        "};\n"
    )
    return agent


def _seen(proc: subprocess.CompletedProcess[str]) -> tuple[int, str, list[str]]:
    """What a user sees of a run: exit code, stdout, stderr without the probe's lines."""
    stderr = [line for line in proc.stderr.splitlines() if line and not line.startswith(("PROBE ", "TORN DOWN"))]
    return proc.returncode, proc.stdout, stderr


@pytest.mark.parametrize("ending", sorted(_ENDINGS))
@pytest.mark.parametrize("strict", [False, True], ids=["plain", "strict"])
def test_a_quick_run_ends_early_and_its_user_sees_what_a_full_exit_shows(tmp_path, ending, strict):
    # The same run twice: by the quick path, which ends the process itself (no
    # interpreter shutdown), and by Typer (a fuel value only Typer converts), which
    # exits as Python does. Output, exit code and audit log must be the same.
    agent = _agent_ending(tmp_path, ending)
    seen = {}
    # Fuel far past what the agent burns (its 300 kB result alone takes ~1e8): only the
    # spelling differs, so that the second run takes Typer's path.
    for path, fuel in (("quick", "10000000000"), ("typer", "10_000_000_000")):
        audit = tmp_path / f"{path}.jsonl"
        argv = ["run", str(agent), "--fuel", fuel, "--audit", str(audit), *(["--strict"] if strict else [])]
        proc, report = _probe(argv)
        assert report["torn_down"] is (path == "typer"), proc.stderr
        assert ("typer" in report["loaded"]) is (path == "typer")
        decisions = [(e["capability"], e["decision"]) for e in map(json.loads, audit.read_text().splitlines())]
        seen[path] = (*_seen(proc), decisions)
    assert seen["quick"] == seen["typer"]
    code, stdout, stderr, decisions = seen["quick"]
    assert "to stderr" in stderr
    assert ("filesystem", "deny") in decisions
    if ending == "throw":  # the agent's own error is said, --strict or not
        assert any("boom" in line for line in stderr)
    if strict:  # --strict: the denial fails the run (exit 3), whatever the agent did after it
        assert code == 3
    elif ending == "throw":
        assert code == 1
    else:
        assert code == 0
        assert json.loads(stdout) == ("x" * 300000 if ending == "result" else {"n": 1})


def test_the_probe_sees_an_import_when_there_is_one(tmp_path):
    # A value the plain conversion is unsure of goes to Typer's own (pydantic):
    # the same probe must then report pydantic, or it proves nothing above.
    agent = tmp_path / "agent.js"
    agent.write_text("export default 1;")
    proc, report = _probe(["run", str(agent), "--fuel", "lots"])
    assert proc.returncode == 2
    assert "pydantic" in report["loaded"]


def _parse(argv: list[str]) -> tuple[str, str]:
    """What the command named by argv[0] receives (repr of its params), or its usage error."""
    group = typer.main.get_command(hugind.cli.app)
    try:
        parent = group.make_context("hugind", [argv[0]], resilient_parsing=True)
        command = group.commands[argv[0]]
        ctx = command.make_context(argv[0], list(argv[1:]), parent=parent)
    except Exception as exc:  # a usage error: its kind and text must be Typer's
        return type(exc).__name__, exc.format_message() if hasattr(exc, "format_message") else str(exc)
    return "ok", repr(sorted((k, v) for k, v in ctx.params.items()))


CASES = [
    ["run", "examples/hello", "--", "world"],
    ["run", "examples/hello"],
    ["run", "a", "--fuel", "100", "--timeout", "2.5", "--backend", "b", "--expect", "sha256:00", "--", "x", "y"],
    ["run", "a", "--policy", "p.yaml", "--audit", "a.jsonl", "--strict", "--json", "--stream"],
    ["run", "a", "--fuel", "-3", "--timeout", "7"],
    ["run", "a", "--fuel", "007", "--timeout", "-0.25"],
    ["run", "a", "--fuel", "lots"],
    ["run", "a", "--fuel", "1.5"],
    ["run", "a", "--fuel", " 12"],
    ["run", "a", "--fuel", "1_000"],
    ["run", "a", "--timeout", "1e3"],
    ["run", "a", "--timeout", "inf"],
    ["run", "a", "--timeout", "soon"],
    ["run", "a", "--timeout", "5."],
    ["run", ""],
    ["run", "a", "--policy", ""],
    ["run", str(REPO / "examples"), "--", "--goal", "x"],
    ["run", "a", "--fuel"],
    ["check", "a", "--json", "--strict", "--policy", "p.yaml", "--expect", "sha256:00"],
    ["build", "a", "-o", "out.wasm"],
    ["build", "a"],
    ["serve", "a", "b", "--timeout", "3", "--backend", "x"],
    ["team", "w.yaml", "--state-dir", "s", "--max-parallel", "3", "--resume", "--json"],
    ["team", "w.yaml", "--max-parallel", "three"],
    ["version"],
]


@pytest.mark.parametrize("argv", CASES, ids=[" ".join(c) or "empty" for c in CASES])
def test_commands_receive_what_typer_alone_would_give_them(monkeypatch, argv):
    ours = _parse(argv)
    monkeypatch.setattr(hugind.cli, "install", lambda params: params)  # Typer's own conversion only
    typers = _parse(argv)
    assert ours == typers


@pytest.mark.parametrize("value", ["http://127.0.0.1:9/v1", "", " local "])
def test_the_backend_from_the_environment_is_converted_alike(monkeypatch, value):
    monkeypatch.setenv("HUGIND_BACKEND", value)
    ours = _parse(["run", "a"])
    monkeypatch.setattr(hugind.cli, "install", lambda params: params)
    assert ours == _parse(["run", "a"])
    assert ours[0] == "ok"


def test_plain_conversion_is_what_the_commands_get():
    # Without this the comparison above could pass with the plain converter never used.
    group = typer.main.get_command(hugind.cli.app)
    parent = group.make_context("hugind", ["run"], resilient_parsing=True)
    command = group.commands["run"]
    command.make_context("run", ["a", "--fuel", "5"], parent=parent)
    kinds = {p.name: type(p._runtime_param).__name__ for p in command.get_params(parent)}
    assert kinds["fuel"] == "PlainCoercion"
    assert kinds["agent"] == "PlainCoercion"


@pytest.mark.parametrize("data", [b"", b"abc", bytes(range(256)) * 4099])
def test_the_run_path_sha256_is_hashlib_s(data):
    # The module cache's file names and the engine digest are computed with it:
    # a different digest would miss every cache file (and pin the wrong engine).
    import hashlib

    from hugind.sha256 import sha256

    ours = sha256(data[:7])
    ours.update(data[7:])
    assert ours.hexdigest() == hashlib.sha256(data).hexdigest()


def test_a_lazy_module_is_the_module_from_its_first_use():
    import subprocess as real

    from hugind.lazy_import import LazyModule

    lazy = LazyModule("subprocess")
    assert "subprocess" in repr(lazy)
    assert lazy.Popen is real.Popen and lazy.PIPE == real.PIPE
    with pytest.raises(AttributeError):
        _ = lazy.no_such_name
    with pytest.raises(ModuleNotFoundError):
        _ = LazyModule("hugind_no_such_module").anything


def test_the_run_path_s_own_data_classes_have_their_docstrings():
    # A dataclass without one gets a docstring made by inspect.signature when the
    # class is created: a cost every cold run pays, for a text nobody reads.
    import dataclasses

    import hugind.cli_quick
    import hugind.manifest
    import hugind.policy.host_rules
    import hugind.policy.model
    import hugind.run_command

    modules = (hugind.cli_quick, hugind.manifest, hugind.policy.model, hugind.policy.host_rules, hugind.run_command)
    defined = [(m, c) for m in modules for c in vars(m).values() if isinstance(c, type)]
    classes = [c for m, c in defined if dataclasses.is_dataclass(c) and c.__module__ == m.__name__]
    assert len(classes) >= 12
    assert [c.__name__ for c in classes if not c.__doc__ or c.__doc__.startswith(f"{c.__name__}(")] == []


def test_the_host_rules_are_still_names_of_the_policy_model():
    # Made on first use (hugind.policy.host_rules), imported as they always were.
    import hugind.policy.host_rules as host_rules
    import hugind.policy.model as model
    from hugind.policy.model import DomainRule, IpRule

    assert (DomainRule, IpRule) == (host_rules.DomainRule, host_rules.IpRule)
    assert DomainRule("*.example.com", 443, "*.example.com:443").wildcard
    with pytest.raises(AttributeError, match="no attribute 'NoSuchRule'"):
        _ = model.NoSuchRule
