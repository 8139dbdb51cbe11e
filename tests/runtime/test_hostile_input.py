"""Hostile JS agents: output floods, deep nesting, lone surrogates, op floods.

Each runs the real CLI and checks the exit code, the message and that the rest
of the run's output is intact. No timing assertions: the subprocess timeout is
only a safety net (a run that ends by its own deadline fails on its message).
"""

from __future__ import annotations

import json

import pytest

from hugind.errors import ExitCode
from hugind.host.dispatch import MAX_PENDING_OPS
from tests.conftest import run_cli

SAFETY_TIMEOUT = 120


def _run(make_agent, source: str, **limits: object):
    # A generous deadline: a run ending on it instead of its own error fails the message checks.
    agent = make_agent({"main.js": source}, permissions={"limits": {"timeout": 60, **limits}})
    return run_cli("run", str(agent), timeout=SAFETY_TIMEOUT)


# ---- output floods: the cap ends the run at once, the output up to it intact ---------------


@pytest.mark.parametrize(
    ("writer", "unit"),
    [
        ('print_raw("x")', "x"),
        ('print("")', "\n"),
        ('console.log("")', "\n"),
        ("Javy.IO.writeSync(1, new Uint8Array([65]))", "A"),
        ('eprint("")', None),
    ],
    ids=["print_raw", "print", "console.log", "Javy.IO.writeSync", "eprint"],
)
def test_writing_past_the_output_cap_a_byte_at_a_time_stops_the_run(make_agent, writer, unit):
    out = _run(make_agent, f"export default () => {{ for (;;) {writer}; }};", max_output_bytes=100)
    assert out.code == ExitCode.LIMIT_EXCEEDED, out
    assert "run stopped: output cap of 100 bytes exceeded" in out.stderr
    if unit is not None:
        assert out.stdout == unit * 100


# ---- deep nesting -----------------------------------------------------------------------------

DEEP = "let a = []; for (let i = 0; i < DEPTH; i++) a = [a];"


def test_an_op_argument_nested_too_deeply_is_a_catchable_invalid_argument(make_agent):
    source = f"""export default () => {{
      {DEEP.replace("DEPTH", "3000")}
      try {{ fs.exists(a); }} catch (e) {{ return [e.name, e.message]; }}
    }};"""
    out = _run(make_agent, source)
    assert out.code == ExitCode.OK, out
    name, message = json.loads(out.stdout)
    assert (name, "nested too deeply" in message) == ("InvalidArgument", True)


def test_a_result_nested_too_deeply_for_the_host_fails_the_run_clearly(make_agent):
    # Past the host's JSON limit (256), within the engine's JSON.parse limit (2000): the host refuses.
    source = f"""export default () => {{ print("before"); {DEEP.replace("DEPTH", "1000")} return a; }};"""
    out = _run(make_agent, source)
    assert out.code == ExitCode.AGENT_FAILED, out
    assert "InvalidResult: the host refused the agent's result" in out.stderr
    assert "nested too deeply" in out.stderr
    assert out.stdout == "before\n"
    assert "Traceback" not in out.stderr and "Stalled" not in out.stderr


def test_a_result_nested_a_million_deep_overflows_the_engine_stack_cleanly(make_agent):
    # JSON.stringify in the engine recurses natively: the wasm stack overflows first (a trap).
    source = f"""export default () => {{ print("before"); {DEEP.replace("DEPTH", "1e6")} return a; }};"""
    out = _run(make_agent, source)
    assert out.code == ExitCode.TRAP, out
    assert "stack overflow" in out.stderr and out.stdout == "before\n"


JSON_AT_DEPTH = """export default (input) => {
  const texts = ['{"a":'.repeat(DEPTH) + "1" + "}".repeat(DEPTH), "[".repeat(DEPTH) + "]".repeat(DEPTH),
                 '"[[[' + "[".repeat(DEPTH) + '"'];
  function at(n) {  // JSON.parse this many JS frames down: they share wasm's stack
    if (n > 0) return at(n - 1);
    const one = (t) => {
      try { JSON.parse(t, (k, v) => v); return "ok"; } catch (e) { return `${e.name}: ${e.message}`; }
    };
    return texts.map(one);
  }
  const out = [];
  for (const frames of [0, 500, 1000, 1500]) { try { out.push(at(frames)); } catch (e) { out.push(e.name); } }
  return out;
};"""


@pytest.mark.parametrize("depth", [2000, 2001, 200_000])
def test_json_parse_of_text_nested_past_the_limit_is_a_catchable_range_error(make_agent, depth):
    """The engine's parser recursed in C past wasm's stack (a trap the agent could not
    catch) at a few tens of thousands of levels, fewer below deep JS recursion."""
    out = _run(make_agent, JSON_AT_DEPTH.replace("DEPTH", str(depth)))
    assert out.code == ExitCode.OK, out
    deep = "RangeError: JSON.parse: the text nests deeper than 2000 levels"
    expected = ["ok", "ok", "ok"] if depth <= 2000 else [deep, deep, "ok"]  # a string's brackets do not nest
    assert json.loads(out.stdout) == [expected] * 4


def test_a_manifest_nested_fifty_thousand_deep_is_a_manifest_error(tmp_path):
    (tmp_path / "main.js").write_text("export default () => 1;")
    (tmp_path / "agent.yaml").write_text(
        "name: deep\nentry_point: main.js\ninput_schema: " + "[" * 50_000 + "]" * 50_000 + "\n"
    )
    out = run_cli("run", str(tmp_path), timeout=SAFETY_TIMEOUT)
    assert out.code == ExitCode.USAGE, out
    assert out.stderr == f"hugind: error: {tmp_path / 'agent.yaml'}: invalid YAML: the document is nested too deeply\n"


# ---- lone UTF-16 surrogates -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "argument", "op"),
    [
        # fetch() itself makes URLs and headers well-formed first, as the Fetch standard
        # says (tests/runtime/test_web_globals.py); http_get_async hands them over raw.
        ('http_get_async("http://127.0.0.1:9/\\ud800")', "url", "net.fetch"),
        ('http_get_async("http://127.0.0.1:9/", {"x-a": "\\udc00"})', "headers.x-a", "net.fetch"),
        ('run_command("echo \\ud800")', "command", "shell.run"),
        ('spawn("echo", ["ok", "\\udfff"])', "args[1]", "shell.spawn"),
        ('fs.write_text("a\\ud800.txt", "x")', "path", "fs.write_text"),
    ],
    ids=["http-url", "http-header", "run_command", "spawn", "fs"],
)
def test_a_lone_surrogate_in_an_op_argument_is_refused_by_name(make_agent, call, argument, op):
    source = f"""export default async () => {{
      print("before");
      try {{ await {call}; return "accepted"; }} catch (e) {{ return [e.name, e.message]; }}
    }};"""
    out = _run(make_agent, source)
    assert out.code == ExitCode.OK, out
    assert out.stdout.splitlines()[0] == "before"
    assert json.loads(out.stdout.splitlines()[1]) == [
        "InvalidArgument",
        f"argument '{argument}' of '{op}' is not valid Unicode (it holds a lone UTF-16 surrogate)",
    ]


@pytest.mark.parametrize("how", ["return", "set_result"])
def test_a_lone_surrogate_in_the_result_becomes_a_replacement_character(make_agent, how):
    value = '{"k\\ud800": ["a\\udc00b", "\\ud83d\\ude00"]}'
    source = f"export default () => ({value});" if how == "return" else f"set_result({value});"
    out = _run(make_agent, source)
    assert out.code == ExitCode.OK, out
    assert json.loads(out.stdout) == {"k\ufffd": ["a\ufffdb", "\U0001f600"]}


def test_a_lone_surrogate_in_the_agents_error_is_replaced(make_agent):
    out = _run(make_agent, 'export default () => { throw new Error("bad \\ud800 input"); };')
    assert out.code == ExitCode.AGENT_FAILED, out
    assert "Error: bad \ufffd input" in out.stderr and "Traceback" not in out.stderr


# ---- op floods --------------------------------------------------------------------------------


def test_a_flood_of_unawaited_ops_finishes(make_agent):
    source = 'export default () => { for (let i = 0; i < 20000; i++) run_command("true"); return "submitted"; };'
    out = _run(make_agent, source)
    assert out.code == ExitCode.OK, out
    assert out.stdout == '"submitted"\n'
    # No internal error, no "can't start new thread": only the denial summary (shell is off).
    lines = out.stderr.splitlines()
    assert lines[0].startswith("hugind: the policy denied "), out.stderr
    assert [line.split()[1] for line in lines[1:]] == ["shell.allow"], out.stderr


def test_ops_past_the_in_flight_cap_are_refused_with_a_clear_error(make_agent):
    source = f"""export default async () => {{
      const ops = [];
      for (let i = 0; i < {MAX_PENDING_OPS + 1000}; i++) ops.push(run_command("true"));
      const counts = {{}};
      for (const r of await Promise.allSettled(ops)) {{
        const key = r.status === "fulfilled" ? "ok" : `${{r.reason.name}}: ${{r.reason.message}}`;
        counts[key] = (counts[key] || 0) + 1;
      }}
      return counts;
    }};"""
    out = _run(make_agent, source)
    assert out.code == ExitCode.OK, out
    # Shell is not allowed here, so every accepted op is a (fast) policy denial.
    assert json.loads(out.stdout) == {
        "PermissionDenied: shell: disabled (permissions.shell.allow is false)": MAX_PENDING_OPS,
        f"LimitExceeded: too many host operations in flight ({MAX_PENDING_OPS}); await some before starting more": 1000,
    }


def test_async_ops_share_a_fixed_pool_of_worker_threads(tmp_path):
    import threading

    from hugind.host.dispatch import MAX_WORKERS, Dispatcher
    from hugind.host.registry import HostContext, Op

    release = threading.Event()

    def blocked(_ctx, _args):
        release.wait(SAFETY_TIMEOUT)
        return "done"

    dispatcher = Dispatcher(HostContext(policy=None, agent_root=tmp_path), [Op("test.block", blocked, is_async=True)])
    before = threading.active_count()
    ids = [dispatcher.submit(b'{"op": "test.block"}') for _ in range(MAX_PENDING_OPS + 10)]
    workers = [t for t in threading.enumerate() if t.name == "hugind-op-worker"]
    assert len(workers) == MAX_WORKERS and threading.active_count() == before + MAX_WORKERS
    release.set()
    replies = {}
    while len(replies) < len(ids):
        item = dispatcher.next_completion(timeout=SAFETY_TIMEOUT)
        assert item is not None, "an op never completed"
        replies[item[0]] = json.loads(item[1])
    assert [replies[i] for i in ids[:MAX_PENDING_OPS]] == [{"ok": "done"}] * MAX_PENDING_OPS
    assert {replies[i]["error"]["kind"] for i in ids[MAX_PENDING_OPS:]} == {"LimitExceeded"}
    assert dispatcher.pending == 0
    dispatcher.close()
    for worker in workers:  # each gets its end-of-run sentinel
        worker.join(SAFETY_TIMEOUT)
        assert not worker.is_alive()
