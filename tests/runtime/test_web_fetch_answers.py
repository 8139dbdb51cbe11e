"""fetch's answers as node has them. The `redirect` option: "follow" follows, "manual"
answers with the redirect itself, "error" rejects, and neither of the last two contacts
the Location. `statusText` is the server's reason phrase. A request nobody answers
rejects with TypeError("fetch failed")."""

from __future__ import annotations

import json
import socket

import pytest

from tests.python.helpers import probe
from tests.runtime.test_web_globals import _compare, needs_node
from tests.support.http_server import RecordingServer, reply

SCRIPT = """
const base = "__BASE__";
const show = (x) => console.log(JSON.stringify(x));
for (const path of ["/moved", "/no-location", "/ok"]) {
  for (const redirect of ["follow", "manual", "error"]) {
    try {
      const r = await fetch(base + path, { redirect });
      show([path, redirect, r.status, r.statusText, r.type, r.redirected, r.url === base + path,
            r.headers.get("location"), await r.text(), r.ok]);
    } catch (e) {
      show([path, redirect, e.name, e.message, String(e.cause)]);
    }
  }
}
const post = await fetch(base + "/moved", { method: "POST", body: "payload", redirect: "manual" });
show(["post", post.status, await post.text()]);
for (const path of ["/reason", "/no-reason", "/ok"]) {
  const r = await fetch(base + path);
  show([path, r.status, r.statusText]);
}
try {
  await fetch("http://127.0.0.1:__CLOSED__/");
} catch (e) {
  show(["refused", e.name, e.message, e instanceof TypeError, e.cause instanceof Error]);
}
console.log("done");
"""


def _with_reason(handler, status: int, reason: str) -> None:
    handler.send_response(status, reason)
    handler.send_header("Content-Length", "0")
    handler.end_headers()


@pytest.fixture
def server():
    srv = RecordingServer()
    srv.routes["/moved"] = lambda h: reply(h, 302, b"moved", {"Location": "/ok", "Content-Type": "text/plain"})
    srv.routes["/no-location"] = lambda h: reply(h, 302, b"nowhere", {"Content-Type": "text/plain"})
    srv.routes["/ok"] = lambda h: reply(h, 200, b"arrived", {"Content-Type": "text/plain"})
    srv.routes["/reason"] = lambda h: _with_reason(h, 203, "Fine, Thanks")
    srv.routes["/no-reason"] = lambda h: _with_reason(h, 200, "")
    yield srv
    srv.close()


def _network(srv, *ports: int) -> dict:
    return {"network": {"allow": True, "allowed_ips": [f"127.0.0.1:{p}" for p in (srv.port, *ports)]}}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@needs_node
def test_redirect_modes_match_node(tmp_path, server):
    closed = _closed_port()
    source = SCRIPT.replace("__BASE__", server.url("").rstrip("/")).replace("__CLOSED__", str(closed))
    out = _compare(tmp_path, "fetch_redirect", source, _network(server, closed))
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("[")]
    assert ["/moved", "manual", 302, "Found", "basic", False, True, "/ok", "moved", False] in lines, out
    assert ["/moved", "error", "TypeError", "fetch failed", "Error: unexpected redirect"] in lines, out
    assert ["/moved", "follow", 200, "OK", "basic", True, False, None, "arrived", True] in lines, out
    assert ["refused", "TypeError", "fetch failed", True, True] in lines, out
    assert ["/reason", 203, "Fine, Thanks"] in lines and ["/no-reason", 200, ""] in lines, out
    # Each run reached /ok by following /moved once (the GET in "follow") and by asking for
    # it four times: "manual", "error" and the POST never went there.
    assert server.paths().count("/ok") == 2 * (1 + 4), server.paths()


def test_python_can_keep_a_redirect(tmp_path, server):
    base = server.url("").rstrip("/")
    body = f"""
    kept = hugind.fetch({base!r} + "/moved", follow_redirects=False)
    followed = hugind.fetch({base!r} + "/moved")
    return [kept.status, kept.headers.get("location"), kept.text, followed.status, followed.text]
    """
    result = probe(tmp_path / "agent", body, _network(server)).value
    assert result == {"ok": True, "value": [302, "/ok", "moved", 200, "arrived"]}, result
    assert server.paths() == ["/moved", "/moved", "/ok"]
