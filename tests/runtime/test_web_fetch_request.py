"""Request features the WPT suites check only in the constructor, seen on the
wire: a ReadableStream request body reaches a real loopback server whole, and
a fetched response's headers are immutable; and formData() on multipart
bodies beyond WPT's few. The same scripts run under node and under `hugind
run`; both must print the same (and send the same)."""

from __future__ import annotations

import json

import pytest

from tests.runtime.test_web_globals import SCRIPTS, _compare, needs_node
from tests.support.http_server import RecordingServer, reply

SOURCE = """
const base = "__BASE__";
const show = (x) => console.log(JSON.stringify(x));
const chunks = ["stre", "amed ", "b\\u00f6dy"];
const stream = new ReadableStream({
  pull(c) {
    if (chunks.length) c.enqueue(new TextEncoder().encode(chunks.shift()));
    else c.close();
  },
});
const req = new Request(base + "/echo", { method: "POST", body: stream, duplex: "half", headers: { "x-n": "1" } });
show([req.bodyUsed, req.headers.get("content-type"), req.duplex, req.mode, req.credentials, req.cache]);
const r = await fetch(req);
show([r.status, await r.text(), req.bodyUsed]);
try {
  r.headers.append("x-a", "b");
  show("appended");
} catch (e) {
  show(e.name);
}
try {
  await fetch(new Request(base + "/echo", { method: "POST", body: "x", mode: "no-cors" }));
  show("fetched no-cors");
} catch (e) {
  show(e.name);
}
for (let i = 0; i < 4; i++) show(i);
console.log("done");
"""


def _chunked(handler) -> bytes:
    """A chunked request body (node streams one so), read off the socket."""
    body = b""
    while True:
        size = int(handler.rfile.readline().split(b";")[0], 16)
        if size == 0:
            # Trailer fields, if any, up to the blank line that ends the body.
            while handler.rfile.readline() not in (b"\r\n", b""):
                pass
            return body
        body += handler.rfile.read(size + 2)[:size]


@pytest.fixture
def echo_server():
    server = RecordingServer()
    server.bodies = []

    def echo(h):
        last = server.requests[-1]
        chunked = h.headers.get("Transfer-Encoding", "").lower() == "chunked"
        body = _chunked(h) if chunked else last["body"]
        server.bodies.append((h.headers.get("x-n"), body))
        reply(h, 200, body, {"Content-Type": "text/plain"})

    server.routes["/echo"] = echo
    yield server
    server.close()


@needs_node
def test_stream_request_body_reaches_the_server(tmp_path, echo_server):
    source = SOURCE.replace("__BASE__", echo_server.url("").rstrip("/"))
    permissions = {"network": {"allow": True, "allowed_ips": [f"127.0.0.1:{echo_server.port}"]}}
    out = _compare(tmp_path, "fetch_request", source, permissions)
    assert json.dumps([200, "streamed b\u00f6dy", True], ensure_ascii=False, separators=(",", ":")) in out, out
    # node's request and hugind's: the server saw the streamed body both times.
    bodies = [body for n, body in echo_server.bodies if n == "1"]
    assert bodies == ["streamed b\u00f6dy".encode()] * 2


@needs_node
def test_multipart_bodies_parse_as_node_parses_them(tmp_path):
    out = _compare(tmp_path, "multipart", (SCRIPTS / "multipart.mjs").read_text())
    assert '[["f","a.bin","application/octet-stream",[195,191,0,120]]]' in out, out
    assert out.count('"TypeError"') == 5, out
