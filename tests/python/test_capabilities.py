"""Python agents' capabilities go through the same ops and policy as JS: same answers, same audit.

Each case runs the same probe as a JS agent and as a Python agent under the
same policy and compares the outcome (value or error kind and message), the
audit log entry by entry (timestamps aside) and the denial count.
"""

from __future__ import annotations

import json
import time

import pytest

from tests.python.helpers import probe, run_py, write_agent
from tests.python.parity import assert_same, both
from tests.redteam.helpers import js
from tests.support.chat_server import ChatServer, Reply
from tests.support.http_server import RecordingServer, reply

FS = {"filesystem": {"read": ["data"], "write": ["out"]}}
FILES = {"data/notes.txt": "public notes\n", "out/.keep": "", "secret.txt": "agent-folder secret"}


@pytest.mark.parametrize(
    ("js_body", "py_body"),
    [
        ("return fs.read_text('data/notes.txt');", "return hugind.fs.read_text('data/notes.txt')"),
        ("return fs.read_text('secret.txt');", "return hugind.fs.read_text('secret.txt')"),
        ("return fs.read_text('/etc/passwd');", "return hugind.fs.read_text('/etc/passwd')"),
        ("return fs.read_text('../x');", "return hugind.fs.read_text('../x')"),
        (
            "fs.write_text('out/a.txt', 'x'); return fs.read_text('out/a.txt');",
            "hugind.fs.write_text('out/a.txt', 'x')\nreturn hugind.fs.read_text('out/a.txt')",
        ),
        ("return fs.write_text('data/notes.txt', 'x');", "return hugind.fs.write_text('data/notes.txt', 'x')"),
        ("return JSON.parse(fs.list_dir('data'));", "return hugind.fs.list_dir('data')"),
        ("return fs.exists('data/nope');", "return hugind.fs.exists('data/nope')"),
    ],
    ids=["read", "read-agent-file", "read-etc", "read-up", "write", "write-read-root", "list", "exists"],
)
def test_fs_is_decided_as_for_js(tmp_path, js_body, py_body):
    js_out, py_out = both(tmp_path, js_body, py_body, FS, files=FILES)
    assert_same(js_out, py_out)


def test_fs_denial_carries_the_same_rule_as_js(tmp_path):
    js_out, py_out = both(
        tmp_path, "return fs.read_text('/etc/passwd');", "return hugind.fs.read_text('/etc/passwd')", FS
    )
    assert py_out.value["ok"] is False and py_out.value["name"] == "PermissionDenied"
    assert py_out.denied[-1]["rule"] == js_out.denied[-1]["rule"] == "filesystem.outside-roots"


def test_an_uncaught_denial_names_its_kind(tmp_path):
    root = write_agent(tmp_path / "a", "import hugind\nhugind.fs.read_text('/etc/passwd')\n")
    from hugind.errors import AgentFailed

    with pytest.raises(AgentFailed) as err:
        run_py(root)
    assert err.value.name == "PermissionDenied"
    assert "outside the readable roots" in err.value.js_message or "runtime_fs_mode" in err.value.js_message


def test_wasi_files_follow_the_policy_roots(tmp_path):
    """Python's own open(): the agent folder read-only, the write root writable, nothing else."""
    root = write_agent(
        tmp_path / "a",
        "def attempt(f):\n    try:\n        return f()\n    except OSError as e:\n        return type(e).__name__\n\n"
        "def main():\n"
        "    return [attempt(lambda: open('data/notes.txt').read()),\n"
        "            attempt(lambda: open('/secret.txt').read()),\n"
        "            attempt(lambda: open('out/w.txt', 'w').write('hi')),\n"
        "            attempt(lambda: open('notes2.txt', 'w').write('no')),\n"
        "            attempt(lambda: open('../outside.txt').read()),\n"
        "            attempt(lambda: open('/etc/passwd').read())]\n",
        FS,
    )
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (tmp_path / "outside.txt").write_text("TOP SECRET")
    value = run_py(root).value
    assert value[0] == "public notes\n"
    assert value[1] == "FileNotFoundError"  # of its folder the agent sees only its .py files (py_sources.py)
    assert value[2] == 2 and (root / "out" / "w.txt").read_text() == "hi"
    assert value[3] in ("PermissionError", "OSError") and not (root / "notes2.txt").exists()
    assert value[4] in ("PermissionError", "FileNotFoundError", "OSError")
    assert value[5] in ("FileNotFoundError", "PermissionError", "OSError")


SHELL = {"shell": {"allow": True, "whitelist": ["echo", "sleep", "sh"]}}


@pytest.mark.parametrize(
    ("js_body", "py_body"),
    [
        ("return await run_command('echo hi there');", "return hugind.run_command('echo hi there')"),
        ("return await run_command('echo hi there');", "return await hugind.run_command_async('echo hi there')"),
        ("return await run_command('cat /etc/hostname');", "return hugind.run_command('cat /etc/hostname')"),
        ("return await spawn('echo', ['a b']);", "return hugind.spawn('echo', ['a b'])"),
        (
            "return (await run_command('sh -c \"exit 3\"', {detailed: true})).exit_code;",
            "return hugind.run_command('sh -c \"exit 3\"', detailed=True)['exit_code']",
        ),
    ],
    ids=["allowed", "allowed-async", "not-whitelisted", "spawn", "detailed"],
)
def test_shell_is_decided_as_for_js(tmp_path, js_body, py_body):
    js_out, py_out = both(tmp_path, js_body, py_body, SHELL)
    assert_same(js_out, py_out)


def test_shell_denied_by_the_whitelist(tmp_path):
    out = probe(tmp_path / "a", "return hugind.run_command('cat /etc/hostname')", SHELL)
    assert out.value["ok"] is False and out.value["name"] == "PermissionDenied"
    assert out.denied[-1]["capability"] == "shell"


def test_two_commands_in_parallel_overlap(tmp_path):
    body = """
    import asyncio, time
    t = time.monotonic()
    a, b = await asyncio.gather(
        hugind.run_command_async("sh -c 'date +%s.%N; sleep 0.6; date +%s.%N'"),
        hugind.run_command_async("sh -c 'date +%s.%N; sleep 0.6; date +%s.%N'"),
    )
    return {"a": a.split(), "b": b.split(), "elapsed": time.monotonic() - t}
    """
    out = probe(tmp_path / "a", body, {"shell": {"allow": True}})
    value = out.value["value"]
    (a0, a1), (b0, b1) = map(float, value["a"]), map(float, value["b"])
    assert max(a0, b0) < min(a1, b1), value  # each started before the other ended
    assert value["elapsed"] < 1.1, value  # not 1.2 s one after the other


NET = {"network": {"allow": True, "allowed_ips": ["127.0.0.1"], "block_private_networks": False}}


@pytest.fixture
def server():
    srv = RecordingServer()
    srv.routes["/hello"] = lambda h: reply(h, 200, b"hello from loopback", {"Content-Type": "text/plain"})
    yield srv
    srv.close()


def test_fetch_to_loopback_is_allowed_as_for_js(tmp_path, server):
    url = server.url("/hello")
    js_out, py_out = both(tmp_path, f"return http_get({js(url)});", f"return hugind.http_get({url!r})", NET)
    assert py_out.value == {"ok": True, "value": "hello from loopback"}
    assert_same(js_out, py_out)
    assert server.paths() == ["/hello", "/hello"]


def test_fetch_async_and_response(tmp_path, server):
    url = server.url("/hello")
    body = f"r = await hugind.fetch_async({url!r})\nreturn [r.status, r.ok, r.text]"
    assert probe(tmp_path / "a", body, NET).value["value"] == [200, True, "hello from loopback"]


def test_a_denied_host_is_decided_by_policy_with_no_traffic(tmp_path, server):
    # The metadata address and a private one: refused by the policy before any socket.
    policy = {"network": {"allow": True, "allowed_ips": [f"127.0.0.1:{server.port}"]}}
    for url in (
        "http://169.254.169.254/latest/meta-data/",
        "http://10.1.2.3/",
        server.url("/hello").replace("127.0.0.1", "127.0.0.2"),
    ):
        js_out, py_out = both(
            tmp_path / url.split("/")[2], f"return http_get({js(url)});", f"return hugind.http_get({url!r})", policy
        )
        assert py_out.value["ok"] is False and py_out.value["name"] == "PermissionDenied", py_out.value
        assert_same(js_out, py_out)
    assert server.paths() == []


def test_ask_llm_through_the_loopback_chat_server(tmp_path):
    with ChatServer([Reply("four"), Reply("streamed answer")]) as chat:
        body = """
        tokens = []
        first = hugind.ask_llm("2+2?")
        second = hugind.ask_llm_stream({"messages": [{"role": "user", "content": "hi"}]}, on_token=tokens.append)
        return [first, second, "".join(tokens)]
        """
        out = probe(tmp_path / "a", body)
        root = tmp_path / "a"
        ran = run_py(root, backend=chat.url)
        requests = chat.chat_requests
    assert out.value["ok"] is False  # without a backend chosen by the user: no LLM
    assert ran.value == {"ok": True, "value": ["four", "streamed answer", "streamed answer"]}
    assert json.dumps(requests[0].body).count("2+2?") == 1


def test_time_sleep_wakes_the_loop(tmp_path):
    body = """
    import asyncio, time
    t = time.monotonic()
    await asyncio.gather(asyncio.sleep(0.2), asyncio.sleep(0.2))
    return time.monotonic() - t
    """
    took = probe(tmp_path / "a", body).value["value"]
    assert 0.19 < took < 0.6
    start = time.monotonic()
    assert time.monotonic() - start < 1
