"""fetch streams the answer: it resolves with the head, and the body gets each piece
as the server sends it, as node's fetch does (net.fetch_stream).

The server sends a first event, then waits until the agent, having read that event
through ``response.body``, asks for /ack; only then does it send the rest. An agent
that got the body only at the end would never ask, and the server would give up
waiting. No timing is involved: the order is forced.
"""

from __future__ import annotations

import contextlib
import json
import threading

import pytest

from tests.runtime.test_web_globals import _agent, _compare, _hugind, needs_node
from tests.support.http_server import RecordingServer, reply

WAIT_S = 20  # how long the server waits for the agent's /ack before it gives up

SCRIPT = """
const base = "__BASE__";
const show = (x) => console.log(JSON.stringify(x));
const r = await fetch(base + "/events");
show([r.status, r.headers.get("content-type"), r.bodyUsed]);
const reader = r.body.getReader();
const decoder = new TextDecoder();
const first = await reader.read();
show(["first", decoder.decode(first.value)]);
show(["ack", await (await fetch(base + "/ack")).text()]);
let rest = "";
for (;;) {
  const { value, done } = await reader.read();
  if (done) break;
  rest += decoder.decode(value, { stream: true });
}
show(["rest", rest + decoder.decode()]);
const whole = await fetch(base + "/events");
const ack = fetch(base + "/ack");
show(["text", await whole.text(), await (await ack).text()]);
console.log("done");
"""


class EventServer(RecordingServer):
    """/events: a chunked answer in two parts, the second only after /ack; /ack releases it."""

    def __init__(self) -> None:
        super().__init__()
        self.gave_up = 0
        self.released = threading.Semaphore(0)
        self.routes["/events"] = self._events
        self.routes["/ack"] = self._ack

    def _events(self, h) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        with contextlib.suppress(OSError):
            _chunk(h, "data: one \u00e9\n\n".encode())
            if not self.released.acquire(timeout=WAIT_S):
                self.gave_up += 1
            _chunk(h, b"data: two\n\n")
            _chunk(h, "data: thr\u00e9e\n\n".encode())
            h.wfile.write(b"0\r\n\r\n")

    def _ack(self, h) -> None:
        self.released.release()
        reply(h, 200, b"acked")


def _chunk(h, data: bytes) -> None:
    h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
    h.wfile.flush()


@pytest.fixture
def server():
    srv = EventServer()
    yield srv
    srv.close()


def _network(srv, **net) -> dict:
    return {"network": {"allow": True, "allowed_ips": [f"127.0.0.1:{srv.port}"], **net}}


@needs_node
def test_the_body_arrives_as_the_server_sends_it(tmp_path, server):
    out = _compare(tmp_path, "fetch_stream", SCRIPT.replace("__BASE__", server.url("").rstrip("/")), _network(server))
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("[")]
    assert ["first", "data: one \u00e9\n\n"] in lines, out
    assert ["rest", "data: two\n\ndata: thr\u00e9e\n\n"] in lines, out
    # The first answer's /ack came while it was still open, for node and for hugind alike.
    assert server.gave_up == 0


def test_a_cap_or_an_abort_errors_the_body_being_read(tmp_path, server):
    source = """
    const base = "__BASE__";
    const show = (x) => console.log(JSON.stringify(x));
    const capped = await fetch(base + "/events");
    const ack = fetch(base + "/ack");
    try {
      await capped.text();
      show("read");
    } catch (e) {
      show([e.name, e.message]);
    }
    await ack;
    const controller = new AbortController();
    const aborted = await fetch(base + "/events", { signal: controller.signal });
    const reader = aborted.body.getReader();
    await reader.read();
    controller.abort();
    try {
      await reader.read();
      show("read");
    } catch (e) {
      show([e.name]);
    }
    await fetch(base + "/ack");
    """.replace("__BASE__", server.url("").rstrip("/"))
    got = _hugind(_agent(tmp_path / "agent", source, _network(server, max_response_bytes=20)))
    assert got.returncode == 0, got.stderr.decode()
    lines = [json.loads(line) for line in got.stdout.decode().splitlines()]
    assert lines[0][0] == "LimitExceeded" and "max_response_bytes" in lines[0][1], lines
    assert lines[1] == ["AbortError"], lines
