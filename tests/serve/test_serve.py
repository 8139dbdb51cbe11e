"""`hugind serve` driven by the official MCP Python client over stdio: agents as tools,
eprint lines as progress notifications, and a server that outlives misbehaving agents."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
import wasmtime

from tests.conftest import REPO, write_agent

mcp = pytest.importorskip("mcp")

GREET = {
    "main.js": """
    export default async function (input) {
      eprint("starting");
      print("stdout of the agent, never on the wire");
      eprint("half way");
      return { greeting: "hello " + input.args.join(" "), count: input.args.length };
    }
    """
}
DOUBLE = {
    "main.js": """
    export default function (input) {
      const request = JSON.parse(input.args[0]);
      return request.n * 2;
    }
    """
}
THROWS = {"main.js": "export default function () { throw new Error('boom from the agent'); }\n"}
LOOPS = {"main.js": "export default function () { for (;;) {} }\n"}


@pytest.fixture
def agents(tmp_path: Path) -> dict[str, Path]:
    out = {
        "greet": write_agent(
            tmp_path / "greet",
            GREET,
            {"name": "greet", "description": "Greets whoever is named", "entry_point": "main.js"},
        ),
        "double": write_agent(
            tmp_path / "double",
            DOUBLE,
            {
                "name": "double",
                "entry_point": "main.js",
                "input_schema": {
                    "type": "object",
                    "properties": {"n": {"type": "integer"}},
                    "required": ["n"],
                },
            },
        ),
        "throws": write_agent(tmp_path / "throws", THROWS, {"name": "throws", "entry_point": "main.js"}),
        "loops": write_agent(
            tmp_path / "loops",
            LOOPS,
            {"name": "loops", "entry_point": "main.js", "permissions": {"limits": {"timeout": 1}}},
        ),
    }
    trap = tmp_path / "trap.wasm"
    trap.write_bytes(wasmtime.wat2wasm('(module (memory (export "memory") 1) (func (export "_start") unreachable))'))
    out["trap"] = trap
    return out


def serve_params(*paths: Path, options: tuple[str, ...] = ()) -> Any:
    args = ["-m", "hugind", "serve", *options, *(str(p) for p in paths)]
    return mcp.StdioServerParameters(command=sys.executable, args=args, cwd=str(REPO))


def with_client(params: Any, body: Callable[[Any], Awaitable[Any]], mode: str = "auto") -> Any:
    async def main() -> Any:
        with anyio.fail_after(120):
            async with mcp.Client(params, mode=mode, read_timeout_seconds=60) as client:
                return await body(client)

    return anyio.run(main)


def text_of(result: Any) -> list[str]:
    return [block.text for block in result.content]


def test_lists_agents_as_tools(agents):
    async def body(client):
        return (await client.list_tools()).tools

    tools = {t.name: t for t in with_client(serve_params(agents["greet"], agents["double"], agents["trap"]), body)}
    assert list(tools) == ["greet", "double", "trap"]
    assert tools["greet"].description == "Greets whoever is named"
    assert tools["greet"].input_schema == {
        "type": "object",
        "properties": {"args": {"type": "array", "items": {"type": "string"}}},
    }
    assert tools["double"].input_schema == {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
    }
    assert tools["trap"].description == "Run the hugind agent 'trap' in its sandbox."


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_call_an_agent_and_get_progress_from_eprint(agents, mode):
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async def body(client):
        return await client.call_tool("greet", {"args": ["Ada", "Lovelace"]}, progress_callback=on_progress)

    result = with_client(serve_params(agents["greet"]), body, mode=mode)
    assert result.is_error is False
    value = json.loads(text_of(result)[0])
    assert value == {"greeting": "hello Ada Lovelace", "count": 2}
    assert result.structured_content == value
    assert text_of(result)[1] == "stdout of the agent, never on the wire\n"
    assert progress == [(1.0, None, "starting"), (2.0, None, "half way")]


def test_custom_input_schema_arguments_and_validation(agents):
    async def body(client):
        good = await client.call_tool("double", {"n": 21})
        bad = await client.call_tool("double", {"n": "many"})
        wrong = await client.call_tool("greet", {"args": "not a list"})
        return good, bad, wrong

    good, bad, wrong = with_client(serve_params(agents["double"], agents["greet"]), body)
    assert (good.is_error, text_of(good)) == (False, ["42"])
    assert bad.is_error and text_of(bad) == ["double: invalid arguments at n: 'many' is not of type 'integer'"]
    assert wrong.is_error and text_of(wrong) == ["greet: 'args' must be a list of strings"]


def test_unknown_tool_is_a_protocol_error(agents):
    async def body(client):
        with pytest.raises(mcp.MCPError) as err:
            await client.call_tool("nope", {})
        return err.value

    err = with_client(serve_params(agents["greet"]), body)
    assert err.message == "unknown tool 'nope' (tools: greet)"


def test_misbehaving_agents_never_take_the_server_down(agents):
    paths = [agents[name] for name in ("greet", "throws", "loops", "trap")]

    async def body(client):
        out = {}
        for name in ("throws", "trap", "loops"):
            out[name] = await client.call_tool(name, {})
            out[f"after-{name}"] = await client.call_tool("greet", {"args": [name]})
        return out

    out = with_client(serve_params(*paths), body)
    assert out["throws"].is_error and text_of(out["throws"])[0].startswith("Error: boom from the agent")
    assert out["trap"].is_error
    assert text_of(out["trap"]) == ["wasm trap: unreachable instruction executed (the module aborted)"]
    assert out["loops"].is_error
    assert text_of(out["loops"]) == ["run stopped: wall-clock deadline exceeded (permissions.limits.timeout)"]
    for name in ("throws", "trap", "loops"):
        after = out[f"after-{name}"]
        assert not after.is_error and json.loads(text_of(after)[0])["greeting"] == f"hello {name}"


def test_concurrent_calls_each_get_their_own_sandbox(agents):
    async def body(client):
        results: dict[int, Any] = {}

        async def one(i: int) -> None:
            results[i] = await client.call_tool("greet", {"args": [str(i)]})

        async with anyio.create_task_group() as tg:
            for i in range(4):
                tg.start_soon(one, i)
        return results

    results = with_client(serve_params(agents["greet"]), body)
    assert {i: json.loads(text_of(r)[0])["greeting"] for i, r in results.items()} == {i: f"hello {i}" for i in range(4)}


def test_stdout_carries_only_protocol_frames(agents):
    """Raw JSON-RPC over the pipes: every line the server writes to stdout is a message."""
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "greet", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "throws", "arguments": {}}},
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "hugind", "serve", str(agents["greet"]), str(agents["throws"])],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    watchdog = threading.Timer(60, proc.kill)  # a hung server fails the test instead of hanging it
    watchdog.start()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        messages = []
        for request in requests:
            proc.stdin.write((json.dumps(request) + "\n").encode())
            proc.stdin.flush()
            if "id" in request:
                while True:
                    line = proc.stdout.readline()
                    assert line, "the server closed its stdout"
                    message = json.loads(line)
                    assert message["jsonrpc"] == "2.0"
                    messages.append(message)
                    if message.get("id") == request["id"]:
                        break
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        assert proc.stdout.read() == b""
        stderr = proc.stderr.read().decode() if proc.stderr else ""
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    by_id = {m["id"]: m for m in messages if "id" in m}
    assert json.loads(by_id[2]["result"]["content"][0]["text"])["greeting"] == "hello "
    assert by_id[3]["result"]["isError"] is True
    # Without a progress token the agent's eprint lines go to the server's stderr.
    assert "[greet] starting" in stderr


def test_serve_refuses_a_bad_agent_before_serving(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "hugind", "serve", str(tmp_path / "missing")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert "hugind: error: no such agent" in result.stderr


def test_two_agents_with_one_name_are_refused(agents, tmp_path):
    twin = write_agent(tmp_path / "twin", GREET, {"name": "greet", "entry_point": "main.js"})
    result = subprocess.run(
        [sys.executable, "-m", "hugind", "serve", str(agents["greet"]), str(twin)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert "two agents are named 'greet'" in result.stderr


def test_malformed_lines_get_json_rpc_errors_and_the_session_goes_on(agents):
    """Text that is not JSON, and JSON that is not a message, each get the JSON-RPC error
    that names the cause (the SDK's transport used to drop them: the client waited forever)."""
    lines = [
        b"not json",
        b'{"jsonrpc":"2.0","id":7}',  # no method, no result
        b'{"jsonrpc":"2.0","id":"s","method":5}',
        b"[1, 2]",
        b'{"jsonrpc":"2.0","id":8,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":9,"method":"ping"}',
    ]
    # All lines at once and the input closed at once: requests under way when the input
    # ends are still answered (the server used to stop at the end of input, often before).
    result = subprocess.run(
        [sys.executable, "-m", "hugind", "serve", str(agents["greet"])],
        cwd=REPO,
        input=b"\n".join(lines) + b"\n",
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr.decode()
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(a["id"], a.get("error", {}).get("code")) for a in answers] == [
        (None, -32700),
        (7, -32600),
        ("s", -32600),
        (None, -32600),
        (8, None),
        (9, None),
    ]
    assert answers[0]["error"]["message"].startswith("Parse error: the line is not JSON (")
    assert "method: Field required" in answers[1]["error"]["message"]
    assert "method: Input should be a valid string" in answers[2]["error"]["message"]
    assert answers[4]["result"] == {}


SLEEPS = {"main.js": "export default async () => { await new Promise((r) => setTimeout(r, 60000)); return 1; };\n"}


def test_a_cancelled_call_stops_its_agent_and_the_server_ends_at_once(tmp_path):
    """notifications/cancelled for a running tools/call stops the agent at its next turn
    with the host: the server, its input closed, ends in seconds, not at the agent's
    60 s wait (nor its deadline); a request sent after it is still answered."""
    sleeper = write_agent(tmp_path / "sleeps", SLEEPS, {"name": "sleeps", "entry_point": "main.js"})
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    }
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "sleeps", "arguments": {}}},
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "hugind", "serve", str(sleeper)],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    proc.stdin.flush()
    time.sleep(2)  # the agent is in its wait
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2, "reason": "enough"}}
    ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
    started = time.monotonic()
    out, err = proc.communicate(json.dumps(cancel).encode() + b"\n" + json.dumps(ping).encode() + b"\n", timeout=50)
    took = time.monotonic() - started
    assert proc.returncode == 0, err.decode()
    answers = {a.get("id"): a for a in map(json.loads, out.splitlines())}
    assert 2 not in answers  # a cancelled request gets no answer
    assert answers[3]["result"] == {}
    assert took < 10, took
