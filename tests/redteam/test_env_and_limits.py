"""Environment secrecy and resource limits: what a hostile agent can see, and how it is stopped.

Every runaway here ends in bounded time with the documented error; none may
hang the suite (limits of 1-2 s, generous upper bounds on a loaded box).
"""

from __future__ import annotations

import json
import time

import pytest

from hugind.errors import AgentFailed, ExitCode, LimitExceeded
from tests.redteam.helpers import probe_source, write_manifest

SECRET = "s3cr3t-undeclared-value"
DECLARED = "declared-token-value"


def limits(**keys) -> dict:
    return {"limits": keys}


# --- environment ---------------------------------------------------------------------------

SNOOP = """
const seen = {meta: input.meta.env, args: get_args_json(), argv: input.args};
const engine = ["process", "std", "os", "native", "Deno", "Bun", "require", "env", "environ",
                "scriptArgs", "bjson"];
seen.globals = Object.getOwnPropertyNames(globalThis).filter((k) => engine.includes(k));
seen.types = [typeof process, typeof std, typeof os, typeof native, typeof Deno, typeof require];
return seen;
"""


def test_undeclared_host_env_is_invisible_to_the_agent(attack):
    out = attack(
        SNOOP,
        {},
        manifest={"env": ["DECLARED_TOKEN"]},
        env={"DECLARED_TOKEN": DECLARED, "UNDECLARED_SECRET": SECRET, "AWS_SECRET_ACCESS_KEY": SECRET},
    )
    seen = out.value["value"]
    assert seen["meta"] == {"DECLARED_TOKEN": DECLARED}
    assert seen["types"] == ["undefined"] * 6
    assert seen["globals"] == []
    assert SECRET not in json.dumps(out.value) + out.stdout + out.stderr


def test_undeclared_host_env_is_invisible_through_the_cli_even_via_the_shell(cli, agent_dir):
    """Real process env: the CLI's own environment holds the secret; the agent asks every way it can."""
    root = agent_dir()
    body = SNOOP.replace(
        "return seen;",
        """
    seen.env = (await run_command('env', {detailed: true})).stdout;
    seen.echo = (await run_command('echo "[$UNDECLARED_SECRET][$DECLARED_TOKEN]"', {detailed: true})).stdout;
    try { seen.proc = fs.read_text('/proc/self/environ'); }
    catch (e) { seen.proc = e.name + ': ' + e.message; }
    return seen;
    """,
    )
    (root / "main.js").write_text(probe_source(body))
    write_manifest(
        root, {"shell": {"allow": True, "timeout": 10}, "filesystem": {"read": ["."]}}, env=["DECLARED_TOKEN"]
    )
    res = cli("run", str(root), env={"UNDECLARED_SECRET": SECRET, "DECLARED_TOKEN": DECLARED})
    assert res.code == 0, res.stderr
    seen = json.loads(res.stdout)["value"]
    assert seen["meta"] == {"DECLARED_TOKEN": DECLARED}
    assert seen["echo"] == "[][]\n"  # env_clear: not even the declared value reaches a child
    assert seen["proc"].startswith("PermissionDenied: ") and "/proc is off limits" in seen["proc"]
    assert SECRET not in res.stdout + res.stderr
    assert DECLARED not in seen["env"]


# --- CPU -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "export default () => { for (;;) {} }",
        "export default async () => { for (;;) await null; }",
        "export default async () => { const t = () => setTimeout(t, 0); t(); await new Promise(() => {}); }",
        "export default () => { for (;;) fs.cwd(); }",
        "export default () => { const re = /(a+)+$/; return re.test('a'.repeat(40) + 'b'); }",
        "export default async () => { await Promise.all(Array.from({length: 5000}, () => "
        "new Promise((r) => setTimeout(r, 600000)))); }",
    ],
    ids=["busy-loop", "microtask-loop", "timer-storm", "host-call-loop", "regex-redos", "timer-flood"],
)
def test_runaway_cpu_hits_the_wall_clock_deadline(attack, source):
    started = time.monotonic()
    with pytest.raises(LimitExceeded, match=r"wall-clock deadline exceeded \(permissions.limits.timeout\)") as info:
        attack(source=source, permissions={"filesystem": {"read": ["."]}, **limits(timeout=1)})
    assert info.value.exit_code == ExitCode.LIMIT_EXCEEDED
    assert time.monotonic() - started < 10


def test_fuel_meters_a_busy_loop(attack):
    with pytest.raises(LimitExceeded, match="fuel exhausted"):
        attack(source="export default () => { let i = 0; for (;;) i++; }", permissions=limits(fuel=10_000_000))


def test_never_settling_promise_is_reported_not_waited_on(attack):
    started = time.monotonic()
    with pytest.raises(AgentFailed, match="can never settle"):
        attack(
            source="export default async () => { await new Promise(() => {}); }",
            permissions=limits(timeout=30),
        )
    assert time.monotonic() - started < 5


# --- memory ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "name", "fragment"),
    [
        (
            "const h = []; for (;;) h.push(new Array(100000).fill(h.length));",
            "InternalError",
            "out of memory",
        ),
        ("const h = []; for (;;) h.push('x'.repeat(1 << 20) + h.length);", "InternalError", "out of memory"),
        ("return 'x'.repeat(2 ** 30).length;", "RangeError", "invalid string length"),
        ("return new ArrayBuffer(2 ** 31).byteLength;", "RangeError", "invalid array buffer length"),
        ("const f = (n) => f(n + 1) + 1; return f(0);", "RangeError", "Maximum call stack size exceeded"),
        ("let s = 'x'; for (;;) s = s + s; ", "InternalError", "string too long"),
    ],
    ids=["array-bomb", "string-bomb", "giant-string", "giant-buffer", "deep-recursion", "doubling"],
)
def test_memory_bombs_are_catchable_errors(attack, body, name, fragment):
    out = attack(body, limits(memory_mb=64, timeout=20))
    assert out.value["ok"] is False
    assert out.value["name"] == name and fragment in out.value["message"], out.value


def test_uncaught_memory_bomb_fails_the_run_with_the_cause(attack):
    with pytest.raises(AgentFailed, match="out of memory") as info:
        attack(
            source="export default () => { const a = []; for (;;) a.push(new Array(1e5).fill(1)); }",
            permissions=limits(memory_mb=48),
        )
    # An uncaught out-of-memory is the memory limit (#28): exit 4, naming the key.
    assert info.value.exit_code == ExitCode.LIMIT_EXCEEDED
    assert "permissions.limits.memory_mb" in info.value.message


# --- output --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "export default () => { for (;;) print('flood '.repeat(100)); }",
        "export default () => { for (;;) console.error('flood '.repeat(100)); }",
        "export default () => { const b = new Uint8Array(65536).fill(65); for (;;) Javy.IO.writeSync(1, b); }",
    ],
    ids=["stdout", "stderr", "raw-write"],
)
def test_output_flood_stops_at_the_cap(attack, source):
    started = time.monotonic()
    with pytest.raises(LimitExceeded, match="output cap of 100000 bytes"):
        attack(source=source, permissions=limits(max_output_bytes=100_000, timeout=30))
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("how", ["return", "set_result"])
def test_oversized_result_is_capped(attack, how):
    body = "'x'.repeat(5 * 1024 * 1024)"
    source = f"export default () => {body};" if how == "return" else f"set_result({body});"
    with pytest.raises(LimitExceeded, match=r"the agent's result is \d+ bytes, over the output cap of 1000000 bytes"):
        attack(source=source, permissions=limits(max_output_bytes=1_000_000))
