"""Binary HTTP bodies, both ways, byte for byte: JS's fetch against node, Python's
Response.content, and the net.fetch op itself.

A body crosses between guest and host as text where its UTF-8 is exact and as
base64 where it is not (hugind/host/http_body.py). Every kind of body a server
may send, or an agent may post, is tried against a real loopback server: all
256 byte values, Latin-1 text, a BOM, truncated UTF-8, a lone surrogate's
3-byte form, and a gzip-encoded binary body the host inflates.
"""

from __future__ import annotations

import base64
import gzip
import json
from urllib.parse import parse_qs, urlsplit

import pytest

from hugind.errors import InvalidArgument, LimitHit
from hugind.host.http_body import request_body, response_body
from tests.python.helpers import probe
from tests.runtime.test_web_globals import _compare, needs_node
from tests.support.http_server import RecordingServer, reply

ALL_BYTES = bytes(range(256))
BODIES = {
    "all": ALL_BYTES,
    "latin1": "caf\u00e9 na\u00efve".encode("latin-1"),
    "bom": b"\xef\xbb\xbfhello",
    "utf8": "gr\u00fc\u00df \u2603 \U0001f600".encode(),
    "truncated": "\u2603".encode()[:2] + b"x",
    "surrogate": b"a\xed\xa0\x80b",
    "empty": b"",
}

SCRIPT = """
const base = "__BASE__";
const show = (x) => console.log(JSON.stringify(x));
const list = (buffer) => Array.from(new Uint8Array(buffer));
for (const kind of __KINDS__) {
  const r = await fetch(`${base}/bin?kind=${kind}`);
  show([kind, r.status, list(await r.clone().arrayBuffer())]);
  show([kind, await r.text()]);
}
const gz = await fetch(`${base}/bin?kind=all&gzip=1`);
show(["gzip", gz.headers.get("content-encoding"), list(await gz.arrayBuffer())]);
const payload = new Uint8Array(256).map((_, i) => i);
const posts = [
  ["u8", payload],
  ["buffer", payload.buffer.slice(0)],
  ["view", new DataView(payload.buffer, 120, 40)],
  ["blob", new Blob([payload.subarray(250), "\\u00e9"])],
  ["bom", new Uint8Array([0xef, 0xbb, 0xbf, 0x61])],
  ["surrogate", new Uint8Array([0x61, 0xed, 0xa0, 0x80])],
  ["text", "plain \\u00e9"],
];
for (const [label, body] of posts) {
  const r = await fetch(`${base}/echo?n=${label}`, { method: "POST", body });
  show([label, list(await r.arrayBuffer())]);
}
console.log("done");
"""

# What each post must put on the wire.
POSTED = {
    "u8": ALL_BYTES,
    "buffer": ALL_BYTES,
    "view": ALL_BYTES[120:160],
    "blob": ALL_BYTES[250:] + "\u00e9".encode(),
    "bom": b"\xef\xbb\xbfa",
    "surrogate": b"a\xed\xa0\x80",
    "text": "plain \u00e9".encode(),
}


def _query(handler, name: str) -> str | None:
    values = parse_qs(urlsplit(handler.path).query).get(name)
    return values[0] if values else None


@pytest.fixture
def server():
    srv = RecordingServer()
    srv.posted = []

    def binary(h):
        data = BODIES[_query(h, "kind")]
        headers = {"Content-Type": "application/octet-stream"}
        if _query(h, "gzip"):
            data = gzip.compress(data)
            headers["Content-Encoding"] = "gzip"
        reply(h, 200, data, headers)

    def echo(h):
        body = srv.requests[-1]["body"]
        srv.posted.append((_query(h, "n"), body))
        reply(h, 200, body, {"Content-Type": "application/octet-stream"})

    srv.routes["/bin"] = binary
    srv.routes["/echo"] = echo
    yield srv
    srv.close()


def _network(srv) -> dict:
    return {"network": {"allow": True, "allowed_ips": [f"127.0.0.1:{srv.port}"]}}


@needs_node
def test_js_fetch_bodies_are_bytes_as_node_has_them(tmp_path, server):
    source = SCRIPT.replace("__BASE__", server.url("").rstrip("/")).replace("__KINDS__", json.dumps(list(BODIES)))
    out = _compare(tmp_path, "fetch_binary", source, _network(server))
    # Not only the same as node: the bytes the server sent.
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("[")]
    received = {line[0]: bytes(line[2]) for line in lines if len(line) == 3 and line[0] in BODIES}
    assert received == BODIES
    assert ["gzip", None, list(ALL_BYTES)] in lines or ["gzip", "gzip", list(ALL_BYTES)] in lines, out
    # Node's request and hugind's each put the same bytes on the wire.
    for label, expected in POSTED.items():
        assert [body for n, body in server.posted if n == label] == [expected, expected], label


def test_python_response_content_and_bytes_bodies(tmp_path, server):
    base = server.url("").rstrip("/")
    body = f"""
    got = {{}}
    for kind in {list(BODIES)!r}:
        r = hugind.fetch({base!r} + "/bin?kind=" + kind)
        got[kind] = [list(r.content), r.text]
    echoed = hugind.fetch({base!r} + "/echo?n=py", method="POST", body=bytes(range(256))).content
    text = hugind.fetch({base!r} + "/echo?n=pytext", method="POST", body=b"plain").text
    return [got, list(echoed), text]
    """
    result = probe(tmp_path / "agent", body, _network(server)).value
    assert result["ok"] is True, result
    got, echoed, text = result["value"]
    for kind, data in BODIES.items():
        assert got[kind] == [list(data), data.decode("utf-8", errors="replace")], kind
    assert bytes(echoed) == ALL_BYTES and text == "plain"
    assert dict(server.posted)["py"] == ALL_BYTES


@pytest.mark.parametrize("data", list(BODIES.values()), ids=list(BODIES))
def test_the_bytes_are_base64_when_there_else_the_text(data):
    fields = response_body(data)
    got = base64.b64decode(fields["body_base64"]) if "body_base64" in fields else fields["body"].encode()
    assert got == data
    assert fields["body"] == data.decode("utf-8", errors="replace")
    assert ("body_base64" in fields) == (data != data.decode("utf-8", errors="replace").encode())


def test_request_bodies_are_checked():
    assert request_body({"body_base64": base64.b64encode(ALL_BYTES).decode()}, 1000) == ALL_BYTES
    assert request_body({"body": "\u00e9"}, 1000) == b"\xc3\xa9"
    assert request_body({}, 1000) is None
    with pytest.raises(InvalidArgument, match="not both"):
        request_body({"body": "a", "body_base64": "YQ=="}, 1000)
    with pytest.raises(InvalidArgument, match="body_base64"):
        request_body({"body_base64": "not base64!"}, 1000)
    with pytest.raises(InvalidArgument, match="lone surrogate"):
        request_body({"body": "a\ud800"}, 1000)
    with pytest.raises(InvalidArgument, match="body_base64"):
        request_body({"body_base64": 5}, 1000)
    # The cap counts decoded bytes, and refuses an oversized encoding before decoding it.
    assert request_body({"body_base64": base64.b64encode(b"x" * 12).decode()}, 12) == b"x" * 12
    with pytest.raises(LimitHit):
        request_body({"body_base64": base64.b64encode(b"x" * 13).decode()}, 12)
    with pytest.raises(LimitHit):
        request_body({"body": "x" * 13}, 12)
