"""npm packages bundled into agents: each script in tests/npm_bundles/agents/
is bundled by esbuild (from the pinned npm install) into one ESM file, run
under `node` and under `hugind run`, and the two outputs must be the same
bytes. The OpenAI SDK talks to the suite's loopback chat server through the
policy-checked fetch. Real esbuild, real node, real engine, real sockets."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.chat_server import ChatServer, Reply
from tests.support.http_server import RecordingServer, reply

ROOT = Path(__file__).resolve().parent.parent / "npm_bundles"
AGENTS = ROOT / "agents"
ESBUILD = ROOT / "node_modules" / ".bin" / "esbuild"
NODE = shutil.which("node")
# Each package and a line of its answer that only a real run prints.
PACKAGES = {
    "uuid": '"v4shape": true',
    "nanoid": '"inAlphabet": true',
    "zod": '"code": "too_small"',
    "ajv": '"keyword": "additionalProperties"',
    "marked": "<h1>Title with <em>emphasis</em></h1>",
    "yaml": '"code":"BAD_INDENT"',
    "date-fns": '"Thursday, February 29th 2024"',
}
# Both sides format dates in UTC: the sandbox has no other time zone.
ENV = {**os.environ, "TZ": "UTC"}

pytestmark = [
    pytest.mark.skipif(
        not ESBUILD.exists(),
        reason="tests/npm_bundles/node_modules is missing: run `npm ci --prefix tests/npm_bundles` (CI does)",
    ),
    pytest.mark.skipif(NODE is None, reason="node is not installed: the expected outputs come from node"),
]


def bundle(entry: Path, out: Path, *defines: str) -> Path:
    """One self-contained ESM file, as docs/npm.md tells agent authors to build it."""
    cmd = [str(ESBUILD), str(entry), "--bundle", "--format=esm", "--platform=browser", "--log-level=warning"]
    cmd += [f"--define:{d}" for d in defines]
    proc = subprocess.run([*cmd, f"--outfile={out}"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # node reads a .js file as ESM only under a package.json that says so.
    (out.parent / "package.json").write_text('{"type": "module"}\n')
    return out


def run_node(script: Path) -> subprocess.CompletedProcess:
    assert NODE is not None
    return subprocess.run([NODE, str(script)], capture_output=True, env=ENV, timeout=120, cwd=script.parent)


def run_hugind(agent: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "hugind", "run", str(agent), *extra]
    return subprocess.run(cmd, capture_output=True, env=ENV, timeout=300)


def agent_dir(root: Path, script: Path, network: dict | None) -> Path:
    root.mkdir(parents=True)
    shutil.copyfile(script, root / "main.js")
    manifest: dict = {"name": "npm-bundle", "entry_point": "main.js"}
    if network is not None:
        manifest["permissions"] = {"network": network}
    (root / "agent.yaml").write_text(yaml.safe_dump(manifest))
    return root


def assert_same_as_node(script: Path, agent: Path | None = None) -> str:
    expected = run_node(script)
    assert expected.returncode == 0, expected.stderr.decode()
    got = run_hugind(agent or script)
    assert got.returncode == 0, got.stderr.decode()
    assert got.stdout == expected.stdout
    return got.stdout.decode()


@pytest.fixture(scope="module")
def bundles(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("bundles")
    return {name: bundle(AGENTS / f"{name}.js", out / f"{name}.js") for name in PACKAGES}


@pytest.mark.parametrize("name", PACKAGES)
def test_bundle_matches_node(bundles, name):
    out = assert_same_as_node(bundles[name])
    assert PACKAGES[name] in out, out


def test_bundles_hold_the_whole_package(bundles):
    # One file per agent with the package inside: no import is left to resolve.
    for name, path in bundles.items():
        assert not re.search(r"^\s*(import|export)\b", path.read_text(), re.M), name
    assert bundles["zod"].stat().st_size > 100_000


def test_formdata_matches_node():
    # The OpenAI SDK evaluates `body instanceof FormData` on every request with a body.
    out = assert_same_as_node(AGENTS / "formdata.js")
    assert out.endswith("hello!\ndone\n"), out


@pytest.fixture
def echo():
    server = RecordingServer()

    def answer(handler):
        last = server.requests[-1]
        headers = {k.lower(): v for k, v in last["headers"].items()}
        sent = {"contentType": headers.get("content-type"), "body": last["body"].decode()}
        reply(handler, 200, json.dumps(sent).encode(), {"Content-Type": "application/json"})

    server.routes["/echo"] = answer
    yield server
    server.close()


def test_fetch_posts_formdata_as_node_does(tmp_path, echo):
    out = tmp_path / "bundle" / "formdata_post.js"
    out.parent.mkdir()
    script = bundle(AGENTS / "formdata_post.js", out, f'ECHO_URL="{echo.url("/echo")}"')
    network = {"allow": True, "allowed_ips": [f"127.0.0.1:{echo.port}"]}
    got = assert_same_as_node(script, agent_dir(tmp_path / "agent", script, network))
    assert got.startswith("multipart/form-data; boundary=BOUNDARY\n"), got
    assert 'filename=\\"a%0Ab.txt\\"' in got and "two\\r\\nlines" in got, got
    assert len(echo.requests) == 2


def test_a_large_bundle_builds_into_an_artifact(bundles, tmp_path):
    wasm = tmp_path / "zod.wasm"
    built = subprocess.run(
        [sys.executable, "-m", "hugind", "build", str(bundles["zod"]), "-o", str(wasm)],
        capture_output=True,
        env=ENV,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr.decode()
    assert built.stdout.decode().startswith("sha256:")
    expected = run_node(bundles["zod"])
    got = run_hugind(wasm)
    assert got.returncode == 0, got.stderr.decode()
    assert got.stdout == expected.stdout


# ---- the OpenAI SDK over the gated fetch ----------------------------------------


@pytest.fixture
def chat():
    with ChatServer(default=Reply("Hello from the loopback server.")) as server:
        yield server


def openai_bundle(tmp_path: Path, chat: ChatServer, name: str = "openai") -> Path:
    out = tmp_path / "bundle" / f"{name}.js"
    out.parent.mkdir()
    return bundle(AGENTS / f"{name}.js", out, f'CHAT_BASE_URL="{chat.url}"')


def loopback(chat: ChatServer) -> dict:
    return {"allow": True, "allowed_ips": [f"127.0.0.1:{chat.port}"]}


def test_openai_sdk_chats_when_the_policy_allows_the_host(tmp_path, chat):
    script = openai_bundle(tmp_path, chat)
    out = assert_same_as_node(script, agent_dir(tmp_path / "agent", script, loopback(chat)))
    reply = json.loads(out)
    assert reply["content"] == "Hello from the loopback server." and reply["finish"] == "stop"
    assert reply["usage"]["total_tokens"] == 15
    # node's request and hugind's: the same SDK, the same chat.
    assert len(chat.chat_requests) == 2
    for request in chat.chat_requests:
        assert request.headers["authorization"] == "Bearer test-key"
        assert request.headers["user-agent"].startswith("OpenAI/JS ")
        assert request.body["messages"][1] == {"role": "user", "content": "Say hello."}


@pytest.mark.parametrize(
    ("network", "why"),
    [
        (None, "network: disabled"),  # no network section: deny by default
        ({"allow": True, "allowed_domains": ["api.example.org"]}, "127.0.0.1"),  # another host only
        ({"allow": True, "allowed_ips": ["127.0.0.2"]}, "127.0.0.1"),  # another loopback address
    ],
    ids=["no-network", "other-domain", "other-ip"],
)
def test_openai_sdk_is_denied_when_the_policy_does_not_allow_the_host(tmp_path, chat, network, why):
    script = openai_bundle(tmp_path, chat)
    audit = tmp_path / "audit.jsonl"
    got = run_hugind(agent_dir(tmp_path / "agent", script, network), "--audit", str(audit))
    assert got.returncode == 0, got.stderr.decode()
    # The SDK wraps fetch's error; its cause is the policy's PermissionDenied.
    reply = json.loads(got.stdout)
    assert reply["error"] == "APIConnectionError" and reply["cause"] == "PermissionDenied", reply
    assert why in reply["message"], reply
    assert "the policy denied" in got.stderr.decode()
    assert chat.requests == []
    denials = [e for e in map(json.loads, audit.read_text().splitlines()) if e["decision"] == "deny"]
    assert [e["capability"] for e in denials] == ["network"]
    assert f"127.0.0.1:{chat.port}/v1/chat/completions" in denials[0]["request"]["url"]


def test_openai_sdk_streams_a_chat(tmp_path, chat):
    # stream: true reads the server-sent events from fetch's Response.body, a ReadableStream.
    script = openai_bundle(tmp_path, chat, "openai_stream")
    out = assert_same_as_node(script, agent_dir(tmp_path / "agent", script, loopback(chat)))
    assert json.loads(out) == {"content": "Hello from the loopback server.", "chunks": True, "finish": "stop"}
    # node's request and hugind's both asked for a stream.
    assert [r.body.get("stream") for r in chat.chat_requests] == [True, True]
