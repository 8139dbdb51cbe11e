"""The proxy's HTTP parsing (h11) against real loopback origins: every request decided, nothing smuggled.

A child may pipeline requests on one connection, mix framing headers, or send
heads past the limits; what reaches an origin must always be a request the
proxy parsed, decided and rewrote itself.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from hugind.confine.proxy import ChildNetProxy, ProxyLimits
from hugind.policy import PolicyEngine
from tests.confine.proxy_helpers import (
    TcpOrigin,
    ask,
    make_engine,
    read_responses,
    read_until_closed,
    refusing_resolver,
    short_socket_path,
    unix_client,
)
from tests.support.http_server import RecordingServer, chunked_route, reply


def _origin() -> RecordingServer:
    server = RecordingServer()

    def hello(h: BaseHTTPRequestHandler) -> None:
        reply(h, 200, b"hello", {"Content-Type": "text/plain"})

    def echo(h: BaseHTTPRequestHandler) -> None:
        last = server.requests[-1]
        reply(h, 200, json.dumps({"headers": last["headers"], "body": last["body"].decode()}).encode())

    server.routes.update({"/hello": hello, "/echo": echo, "/chunked": chunked_route})
    return server


@pytest.fixture
def origin() -> Iterator[RecordingServer]:
    server = _origin()
    yield server
    server.close()


@pytest.fixture
def origin2() -> Iterator[RecordingServer]:
    server = _origin()
    yield server
    server.close()


@pytest.fixture
def sock_path() -> Iterator[Path]:
    with short_socket_path() as path:
        yield path


def audit(engine: PolicyEngine) -> list[dict]:
    return [e for e in engine.audit.entries if e["capability"] == "network"]


def get(url: str, host: str = "forged.test", extra: str = "") -> bytes:
    return f"GET {url} HTTP/1.1\r\nHost: {host}\r\n{extra}\r\n".encode()


# --- every request on a connection is parsed and decided ---------------------------------------


def test_a_pipelined_request_is_never_forwarded_when_the_connection_closes(
    tmp_path: Path, sock_path: Path, origin: RecordingServer
) -> None:
    # The default: one exchange per connection. The request behind the first goes nowhere, to no origin.
    calls: list[str] = []
    engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{origin.port}"]}, refusing_resolver(calls))
    raw = get(origin.url("/hello")) + get(origin.url("/echo"), "denied.test") + get("http://denied.test/")
    with ChildNetProxy(engine, sock_path) as proxy, unix_client(sock_path) as sock:
        sock.sendall(raw)
        responses, rest = read_responses(sock, ["GET", "GET", "GET"])
    assert [(r.status, r.body, r.headers["connection"]) for r in responses] == [(200, b"hello", "close")]
    assert rest == b""
    assert origin.paths() == ["/hello"] and origin.requests[0]["headers"]["Host"] == f"127.0.0.1:{origin.port}"
    assert [e["decision"] for e in audit(engine)] == ["allow"] and calls == []
    assert proxy.stats.upstream_connects == 1


@pytest.mark.parametrize("keep_alive", [False, True])
def test_no_byte_behind_a_request_reaches_its_origin_undecided(
    tmp_path: Path, sock_path: Path, keep_alive: bool
) -> None:
    # An origin that reads everything it is sent: the request pipelined behind the first must not be among it,
    # whether the proxy ends the connection (default) or decides the next request on its own (keep-alive).
    tcp = TcpOrigin("record")
    try:
        engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{tcp.port}"]}, refusing_resolver([]))
        raw = get(f"http://127.0.0.1:{tcp.port}/a") + get(f"http://127.0.0.1:{tcp.port}/b", "denied.test")
        with (
            ChildNetProxy(engine, sock_path, limits=ProxyLimits(keep_alive=keep_alive)),
            unix_client(sock_path) as sock,
        ):
            sock.sendall(raw + get("http://denied.test/c", "denied.test"))
            responses, _ = read_responses(sock, ["GET", "GET", "GET"])
    finally:
        tcp.close()
    assert [r.status for r in responses] == ([200, 200, 403] if keep_alive else [200])
    first = tcp.received[0]
    assert first.count(b"HTTP/1.1") == 1 and first.startswith(b"GET /a HTTP/1.1\r\n")
    assert f"Host: 127.0.0.1:{tcp.port}".encode() in first and b"denied.test" not in first
    if keep_alive:  # the second went by itself, decided, its Host rewritten; the third was refused
        assert len(tcp.received) == 2 and tcp.received[1].startswith(b"GET /b HTTP/1.1\r\n")
        assert b"denied.test" not in tcp.received[1]
        assert [e["decision"] for e in audit(engine)] == ["allow", "allow", "deny"]
    else:
        assert len(tcp.received) == 1


def test_keep_alive_decides_a_pipelined_request_to_a_denied_host(
    tmp_path: Path, sock_path: Path, origin: RecordingServer
) -> None:
    calls: list[str] = []
    engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{origin.port}"]}, refusing_resolver(calls))
    raw = get(origin.url("/hello")) + get("http://denied.test/secret", "denied.test") + get(origin.url("/hello"))
    with ChildNetProxy(engine, sock_path, limits=ProxyLimits(keep_alive=True)) as proxy:
        with unix_client(sock_path) as sock:
            sock.sendall(raw)
            responses, rest = read_responses(sock, ["GET", "GET", "GET"])
        assert proxy.stats.denied == 1 and proxy.stats.upstream_connects == 1
    first, refused = responses  # the refusal ends the connection: the third request is never read
    assert (first.status, first.body) == (200, b"hello") and "connection" not in first.headers
    assert refused.status == 403 and refused.headers["x-hugind-rule"] == "network.allowed_domains"
    assert refused.body.decode().startswith("denied by network.allowed_domains: network: host denied.test")
    assert rest == b""
    assert origin.paths() == ["/hello"]
    allow, deny = audit(engine)
    assert allow["decision"] == "allow" and allow["request"]["url"] == origin.url("/hello")
    assert deny["decision"] == "deny" and deny["rule"] == "network.allowed_domains"
    assert deny["request"]["url"] == "http://denied.test/secret"
    assert calls == []  # refused by name, never resolved


def test_keep_alive_rewrites_host_on_every_request(
    tmp_path: Path, sock_path: Path, origin: RecordingServer, origin2: RecordingServer
) -> None:
    # Each request goes where its own URL says, decided anew; the child's Host never reaches an origin.
    allowed = [f"127.0.0.1:{origin.port}", f"127.0.0.1:{origin2.port}"]
    engine = make_engine(tmp_path, {"allowed_ips": allowed})
    raw = (
        get(origin.url("/hello"), "a.test")
        + get(origin2.url("/hello"), f"127.0.0.1:{origin.port}")
        + get(origin.url("/hello"), "b.test", "Connection: close\r\n")
    )
    with ChildNetProxy(engine, sock_path, limits=ProxyLimits(keep_alive=True)) as proxy:
        with unix_client(sock_path) as sock:
            sock.sendall(raw)
            responses, rest = read_responses(sock, ["GET", "GET", "GET"])
        assert proxy.stats.forwarded == 3 and proxy.stats.upstream_connects == 3
    assert [(r.status, r.body) for r in responses] == [(200, b"hello")] * 3 and rest == b""
    assert responses[-1].headers["connection"] == "close"  # the child asked for it on its last request
    seen = [r["headers"] for r in origin.requests] + [r["headers"] for r in origin2.requests]
    assert [h["Host"] for h in seen] == [f"127.0.0.1:{origin.port}"] * 2 + [f"127.0.0.1:{origin2.port}"]
    assert all(h["Connection"] == "close" for h in seen)
    urls = [origin.url("/hello"), origin2.url("/hello"), origin.url("/hello")]
    assert [e["request"]["url"] for e in audit(engine)] == urls


def test_keep_alive_idle_connection_is_closed_quietly(tmp_path: Path, sock_path: Path, origin: RecordingServer) -> None:
    engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{origin.port}"]})
    limits = ProxyLimits(keep_alive=True, idle_timeout=0.5, header_timeout=5)
    with ChildNetProxy(engine, sock_path, limits=limits), unix_client(sock_path) as sock:
        start = time.monotonic()
        sock.sendall(get(origin.url("/hello")))
        data = read_until_closed(sock)
    assert data.startswith(b"HTTP/1.1 200 ") and data.endswith(b"hello")  # then silence: no 408 for an idle child
    assert 0.4 < time.monotonic() - start < 3


# --- framing is h11's: nothing smuggled past the decision ---------------------------------------


SMUGGLED = b"GET http://denied.test/ HTTP/1.1\r\nHost: denied.test\r\n\r\n"


@pytest.mark.parametrize(
    "framing",
    [
        b"Content-Length: 50\r\nTransfer-Encoding: chunked\r\n",
        b"Transfer-Encoding: chunked\r\nContent-length: 4\r\n",
        b"Content-Length: 4\r\nTransfer-Encoding: CHUNKED\r\n",
        b"Transfer-Encoding: xchunked\r\n",
        b"Transfer-Encoding: chunked, identity\r\n",
        b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
        b"Content-Length: 4\r\nContent-Length: 50\r\n",
        b"Content-Length: 4, 50\r\n",
        b"Content-Length: +4\r\n",
    ],
)
def test_ambiguous_framing_is_refused_before_any_decision(
    tmp_path: Path, sock_path: Path, origin: RecordingServer, framing: bytes
) -> None:
    engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{origin.port}"]})
    head = f"POST {origin.url('/echo')} HTTP/1.1\r\nHost: x\r\n".encode() + framing + b"\r\n"
    with ChildNetProxy(engine, sock_path, limits=ProxyLimits(keep_alive=True)) as proxy:
        response = ask(sock_path, head + b"0\r\n\r\n" + SMUGGLED)
        assert proxy.stats.upstream_connects == 0 and proxy.stats.bad_requests == 1
    assert response.status in (400, 501) and response.body.decode().startswith("proxy: ")
    assert audit(engine) == [] and origin.requests == []


def test_bad_chunking_is_refused(tmp_path: Path, sock_path: Path, origin: RecordingServer) -> None:
    engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{origin.port}"]})
    raw = f"POST {origin.url('/echo')} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
    with ChildNetProxy(engine, sock_path):
        response = ask(sock_path, raw + b"zz\r\nhello\r\n0\r\n\r\n")
    assert response.status == 400 and response.body.startswith(b"proxy: bad request body")


def test_connection_header_cannot_strip_the_framing(tmp_path: Path, sock_path: Path, origin: RecordingServer) -> None:
    # "Connection: Content-Length" would leave the body behind as the origin's next request if the proxy obeyed.
    engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{origin.port}"]})
    body = SMUGGLED
    raw = (
        f"POST {origin.url('/echo')} HTTP/1.1\r\nHost: x\r\nConnection: Content-Length, X-Drop\r\n"
        f"X-Drop: 1\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    with ChildNetProxy(engine, sock_path):
        response = ask(sock_path, raw)
    assert response.status == 200
    echoed = json.loads(response.body)
    assert echoed["body"] == body.decode() and "X-Drop" not in echoed["headers"]
    assert origin.paths() == ["/echo"]


def test_chunked_bodies_are_reframed(tmp_path: Path, sock_path: Path, origin: RecordingServer) -> None:
    engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{origin.port}"]})
    with ChildNetProxy(engine, sock_path), unix_client(sock_path) as sock:
        sock.sendall(get(origin.url("/chunked")))
        [response], rest = read_responses(sock, ["GET"])
    assert response.status == 200 and response.body == b"y" * 1_000_000 and rest == b""


# --- heads: bounded, well-formed, Host where HTTP/1.1 needs it ----------------------------------


def test_oversized_head_is_refused(tmp_path: Path, sock_path: Path, origin: RecordingServer) -> None:
    engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{origin.port}"]})
    big = get(origin.url("/hello"), extra="X-Big: " + "a" * 5000 + "\r\n")
    limits = ProxyLimits(max_header_bytes=4096, keep_alive=True)
    with ChildNetProxy(engine, sock_path, limits=limits) as proxy:
        response = ask(sock_path, big)  # the whole head in one piece: measured after h11 parsed it
        assert response.status == 431 and b"larger than 4096" in response.body
        with unix_client(sock_path) as sock:  # on a kept connection, the second head is bounded the same
            sock.sendall(get(origin.url("/hello")) + big)
            responses, _ = read_responses(sock, ["GET", "GET"])
        assert [r.status for r in responses] == [200, 431]
        assert proxy.stats.bad_requests == 2
    assert origin.paths() == ["/hello"] and len(audit(engine)) == 1


def test_a_request_without_host_is_refused_unless_it_is_a_connect(tmp_path: Path, sock_path: Path) -> None:
    tcp = TcpOrigin("echo")
    try:
        engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{tcp.port}"]})
        with ChildNetProxy(engine, sock_path):
            response = ask(sock_path, f"GET http://127.0.0.1:{tcp.port}/ HTTP/1.1\r\nX: 1\r\n\r\n".encode())
            assert response.status == 400 and b"needs a Host header" in response.body
            for version in ("1.0", "1.1"):  # HTTP/1.0 needs no Host; 1.1 clients leave it out on CONNECT too
                with unix_client(sock_path) as sock:
                    sock.sendall(f"CONNECT 127.0.0.1:{tcp.port} HTTP/{version}\r\nX: 1\r\n\r\nping".encode())
                    sock.shutdown(socket.SHUT_WR)
                    assert read_until_closed(sock) == b"HTTP/1.1 200 Connection established\r\n\r\nping"
        assert len(audit(engine)) == 2
    finally:
        tcp.close()


def test_a_connect_with_a_body_is_refused(tmp_path: Path, sock_path: Path) -> None:
    engine = make_engine(tmp_path, {"allowed_ips": ["127.0.0.1"]})
    with ChildNetProxy(engine, sock_path):
        response = ask(sock_path, b"CONNECT 127.0.0.1:9 HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd")
    assert response.status == 400 and audit(engine) == []


# --- what comes back from the origin --------------------------------------------------------------


def test_expect_100_continue_is_relayed(tmp_path: Path, sock_path: Path, origin: RecordingServer) -> None:
    engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{origin.port}"]})
    head = f"POST {origin.url('/echo')} HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"
    with ChildNetProxy(engine, sock_path), unix_client(sock_path) as sock:
        sock.sendall(head.encode())
        interim = b""
        while not interim.endswith(b"\r\n\r\n"):
            interim += sock.recv(1)
        assert interim.startswith(b"HTTP/1.1 100 ")
        sock.sendall(b"hello")
        [response], _ = read_responses(sock, ["POST"])
    assert response.status == 200 and json.loads(response.body)["body"] == "hello"
    assert response.headers["connection"] == "close"  # the 1xx passed as it was; the final head says close


def test_head_response_has_no_body(tmp_path: Path, sock_path: Path, origin: RecordingServer) -> None:
    engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{origin.port}"]})
    with ChildNetProxy(engine, sock_path), unix_client(sock_path) as sock:
        sock.sendall(f"HEAD {origin.url('/hello')} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        [response], rest = read_responses(sock, ["HEAD"])
    assert response.status == 200 and response.headers["content-length"] == "5"
    assert response.body == b"" and rest == b""


def test_a_malformed_response_is_a_502(tmp_path: Path, sock_path: Path) -> None:
    tcp = TcpOrigin("echo")  # answers the request with the request itself: not a status line
    try:
        engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{tcp.port}"]})
        with ChildNetProxy(engine, sock_path) as proxy:
            response = ask(sock_path, get(f"http://127.0.0.1:{tcp.port}/x"))
            assert proxy.stats.upstream_failures == 1
        assert response.status == 502 and response.body.startswith(b"proxy: bad response from the origin")
    finally:
        tcp.close()
