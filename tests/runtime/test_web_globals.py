"""The web-standard globals (URL, crypto, events, abort, timers, Blob,
structuredClone, TextDecoder, fetch's Response, ReadableStream, Intl) against node: each
script in web_globals/ runs under `node` (as ESM) and under `hugind run`, and
the two outputs must be the same bytes. Real engine, real node, a real
loopback HTTP server for fetch."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.support.http_server import RecordingServer, reply

SCRIPTS = Path(__file__).parent / "web_globals"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed: the expected outputs come from node")
# Both sides format dates in UTC: the sandbox has no other time zone.
ENV = {**os.environ, "TZ": "UTC"}


def _node(script: Path) -> subprocess.CompletedProcess:
    assert NODE is not None
    return subprocess.run([NODE, str(script)], capture_output=True, env=ENV, timeout=60, cwd=script.parent)


def _hugind(agent: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hugind", "run", str(agent)], capture_output=True, env=ENV, timeout=120
    )


def _agent(root: Path, source: str, permissions: dict | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "main.js").write_text(source)
    manifest: dict = {"name": "web-globals", "entry_point": "main.js"}
    if permissions:
        manifest["permissions"] = permissions
    (root / "agent.yaml").write_text(yaml.safe_dump(manifest))
    return root


def _compare(tmp_path: Path, name: str, source: str, permissions: dict | None = None) -> str:
    script = tmp_path / "node" / f"{name}.mjs"
    script.parent.mkdir()
    script.write_text(source)
    expected = _node(script)
    assert expected.returncode == 0, expected.stderr.decode()
    got = _hugind(_agent(tmp_path / "agent", source, permissions))
    assert got.returncode == 0, got.stderr.decode()
    out = got.stdout.decode()
    # Both ran to the end, and said the same thing on the way.
    assert out.endswith("done\n") and out.count("\n") > 5, out
    assert got.stdout == expected.stdout
    return out


@needs_node
@pytest.mark.parametrize(
    "name", ["url", "url_random", "crypto", "events_timers", "encoding", "clone_blob", "intl", "spec_edges"]
)
def test_script_matches_node(tmp_path, name):
    _compare(tmp_path, name, (SCRIPTS / f"{name}.mjs").read_text())


def test_the_url_table_is_large():
    # A few hundred inputs against five bases: the comparison above covers them all.
    source = (SCRIPTS / "url.mjs").read_text()
    table = source.split("const inputs = [", 1)[1].split("];", 1)[0]
    assert table.count('",') + table.count('"\n') >= 180


@pytest.fixture
def web():
    server = RecordingServer()
    server.routes["/text"] = lambda h: reply(
        h, 201, b"hello text", {"Content-Type": "text/plain; charset=utf-8", "X-Custom": "a"}
    )
    server.routes["/json"] = lambda h: reply(
        h, 200, json.dumps({"a": [1, 2], "b": "\u00fc"}).encode(), {"Content-Type": "application/json"}
    )

    def echo(h):
        last = server.requests[-1]
        headers = {k.lower(): v for k, v in last["headers"].items()}
        body = {
            "method": last["method"],
            "contentType": headers.get("content-type"),
            "token": headers.get("x-token"),
            "body": last["body"].decode(),
        }
        reply(h, 200, json.dumps(body).encode(), {"Content-Type": "application/json"})

    def slow(h):
        time.sleep(1)
        with contextlib.suppress(OSError):  # the client gave up (node closes an aborted request)
            reply(h, 200, b"late")

    server.routes["/echo"] = echo
    server.routes["/slow"] = slow
    server.routes["/redirect"] = lambda h: reply(h, 302, b"", {"Location": "/text"})
    yield server
    server.close()


@needs_node
def test_fetch_matches_node(tmp_path, web):
    source = (SCRIPTS / "fetch.mjs").read_text().replace("__BASE__", web.url("").rstrip("/"))
    permissions = {"network": {"allow": True, "allowed_ips": [f"127.0.0.1:{web.port}"]}}
    _compare(tmp_path, "fetch", source, permissions)


@needs_node
def test_streams_match_node(tmp_path, web):
    source = (SCRIPTS / "streams.mjs").read_text().replace("__BASE__", web.url("").rstrip("/"))
    permissions = {"network": {"allow": True, "allowed_ips": [f"127.0.0.1:{web.port}"]}}
    out = _compare(tmp_path, "streams", source, permissions)
    # The fetched body came through the stream, and the agent's own streams ran to their end.
    assert '["hello text",true]' in out and '["g1","g2"]' in out, out


def test_fetched_headers_still_read_as_a_plain_object(tmp_path, web):
    # Agents written against the old fetch read `headers` as a plain object.
    source = f"""
    const r = await fetch("{web.url("/text")}");
    console.log(r.headers["x-custom"], r.headers["content-type"], Object.keys(r.headers).includes("x-custom"));
    console.log(typeof r.headers.get, r.headers.get("X-Custom"));
    """
    permissions = {"network": {"allow": True, "allowed_ips": [f"127.0.0.1:{web.port}"]}}
    got = _hugind(_agent(tmp_path / "agent", source, permissions))
    assert got.returncode == 0, got.stderr.decode()
    assert got.stdout.decode() == "a text/plain; charset=utf-8 true\nfunction a\n"


def test_a_run_ends_cleanly_with_host_fetches_still_running(tmp_path, web):
    """fetch.mjs leaves aborted fetches running in host worker threads when it is done;
    the process used to crash on its way out in ~40% of runs (SIGSEGV: OpenSSL's exit
    handlers tore it down under a worker still loading the CA bundle)."""
    source = (SCRIPTS / "fetch.mjs").read_text().replace("__BASE__", web.url("").rstrip("/"))
    permissions = {"network": {"allow": True, "allowed_ips": [f"127.0.0.1:{web.port}"]}}
    agent = _agent(tmp_path / "agent", source, permissions)
    for _ in range(6):
        got = _hugind(agent)
        assert (got.returncode, got.stderr) == (0, b"")
        assert got.stdout.endswith(b"done\n")


def test_fetch_stays_behind_the_policy(tmp_path, web):
    source = f"""
    try {{ await fetch("{web.url("/text")}"); console.log("fetched"); }}
    catch (e) {{ console.log(e.name); }}
    """
    got = _hugind(_agent(tmp_path / "agent", source))
    assert got.stdout.decode() == "PermissionDenied\n", got.stderr.decode()
    assert web.requests == []


def test_random_values_differ_between_runs_of_one_snapshot(tmp_path):
    # The engine starts from a snapshot taken after the prelude ran: entropy
    # must be drawn per call, so two runs of one image never agree.
    agent = _agent(
        tmp_path / "agent",
        "console.log(crypto.randomUUID(), Array.from(crypto.getRandomValues(new Uint8Array(8))).join());",
    )
    env = {**ENV, "HUGIND_SNAPSHOT": "1", "HUGIND_CACHE_DIR": str(tmp_path / "cache")}
    outs = [
        subprocess.run([sys.executable, "-m", "hugind", "run", str(agent)], capture_output=True, env=env, timeout=120)
        for _ in range(2)
    ]
    assert all(o.returncode == 0 for o in outs), [o.stderr for o in outs]
    first, second = (o.stdout.decode() for o in outs)
    assert first.count("-") == 4 and first != second
