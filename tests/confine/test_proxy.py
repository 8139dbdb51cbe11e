"""ChildNetProxy against real loopback origins, through its real Unix socket.

Decisions about non-loopback addresses are asserted at the policy layer: a 403
and no upstream connection (``stats.upstream_connects`` stays 0).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from hugind.confine.proxy import (
    FORWARDER_PATH,
    ChildNetProxy,
    ProxyLimits,
    forwarder_argv,
    parse_request_head,
    proxy_env,
)
from hugind.confine.proxy.base import Reply
from hugind.confine.proxy.decide import connect_url, decide, forward_url
from hugind.policy import PolicyEngine
from tests.confine.proxy_helpers import (
    TcpOrigin,
    ask,
    free_port,
    make_engine,
    parse_response,
    read_head,
    read_until_closed,
    recording_resolver,
    refusing_resolver,
    short_socket_path,
    unix_client,
    wait_for,
)
from tests.support.http_server import RecordingServer, big_route, reply


@pytest.fixture
def origin() -> Iterator[RecordingServer]:
    server = RecordingServer()

    def hello(h: BaseHTTPRequestHandler) -> None:
        reply(h, 200, b"hello", {"Content-Type": "text/plain"})

    def echo(h: BaseHTTPRequestHandler) -> None:
        last = server.requests[-1]
        data = {"method": last["method"], "headers": last["headers"], "body": last["body"].decode()}
        reply(h, 200, json.dumps(data).encode(), {"Content-Type": "application/json"})

    server.routes.update({"/hello": hello, "/echo": echo, "/big": big_route})
    yield server
    server.close()


@pytest.fixture
def sock_path() -> Iterator[Path]:
    with short_socket_path() as path:
        yield path


@pytest.fixture
def tcp_origin() -> Iterator[TcpOrigin]:
    server = TcpOrigin("echo")
    yield server
    server.close()


def proxy_for(engine: PolicyEngine, path: Path, **limits: float) -> ChildNetProxy:
    return ChildNetProxy(engine, path, limits=ProxyLimits(**limits))  # type: ignore[arg-type]


def audit(engine: PolicyEngine) -> list[dict]:
    return [e for e in engine.audit.entries if e["capability"] == "network"]


# --- allowed targets -------------------------------------------------------------------------


def test_socket_is_private_and_removed_on_close(tmp_path: Path, sock_path: Path) -> None:
    engine = make_engine(tmp_path, {})
    with ChildNetProxy(engine, sock_path):
        mode = os.stat(sock_path).st_mode
        assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
        assert sorted(os.listdir(sock_path.parent)) == ["proxy.sock"]  # no temp dir left behind
    assert not sock_path.exists()


def test_existing_path_is_not_replaced(tmp_path: Path, sock_path: Path) -> None:
    sock_path.write_text("someone else's")
    with pytest.raises(FileExistsError):
        ChildNetProxy(make_engine(tmp_path, {}), sock_path).start()
    assert sock_path.read_text() == "someone else's"
    assert sorted(os.listdir(sock_path.parent)) == ["proxy.sock"]


def test_socket_path_too_long_is_refused_before_binding(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="longer than"):
        ChildNetProxy(make_engine(tmp_path, {}), Path("/tmp") / ("x" * 100)).start()


def test_connect_tunnel_reaches_allowed_origin(tmp_path: Path, sock_path: Path, origin: RecordingServer) -> None:
    engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{origin.port}"]})
    with ChildNetProxy(engine, sock_path), unix_client(sock_path) as sock:
        sock.sendall(f"CONNECT 127.0.0.1:{origin.port} HTTP/1.1\r\nHost: 127.0.0.1:{origin.port}\r\n\r\n".encode())
        assert read_head(sock).startswith(b"HTTP/1.1 200 ")
        sock.sendall(b"GET /hello HTTP/1.1\r\nHost: tunnel.test\r\nConnection: close\r\n\r\n")
        answer = read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 200 OK") and answer.endswith(b"hello")
    assert origin.requests[-1]["headers"]["Host"] == "tunnel.test"  # a tunnel is opaque: bytes as sent
    [entry] = audit(engine)
    assert entry["decision"] == "allow" and entry["rule"] == "network.allowed_ips"
    url = f"https://127.0.0.1:{origin.port}/"
    assert entry["request"] == {"op": "connect", "url": url, "addresses": ["127.0.0.1"]}


def test_bytes_sent_with_the_connect_request_are_not_lost(
    tmp_path: Path, sock_path: Path, tcp_origin: TcpOrigin
) -> None:
    # Clients may send the first tunnel bytes (a TLS ClientHello) right behind the CONNECT head.
    engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{tcp_origin.port}"]})
    with ChildNetProxy(engine, sock_path), unix_client(sock_path) as sock:
        sock.sendall(f"CONNECT 127.0.0.1:{tcp_origin.port} HTTP/1.1\r\n\r\nearly bytes".encode())
        sock.shutdown(socket.SHUT_WR)  # half-close: the echo origin answers, then closes
        answer = read_until_closed(sock)
    assert answer == b"HTTP/1.1 200 Connection established\r\n\r\nearly bytes"


def test_tunnels_run_concurrently_and_carry_large_data(tmp_path: Path, sock_path: Path, tcp_origin: TcpOrigin) -> None:
    engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{tcp_origin.port}"]})
    payload = os.urandom(1 << 20)
    results: dict[int, bytes] = {}

    def one(i: int) -> None:
        with unix_client(sock_path) as sock:
            sock.sendall(f"CONNECT 127.0.0.1:{tcp_origin.port} HTTP/1.1\r\n\r\n".encode())
            assert read_head(sock).startswith(b"HTTP/1.1 200 ")

            def send() -> None:
                sock.sendall(payload)
                sock.shutdown(socket.SHUT_WR)

            sender = threading.Thread(target=send)
            sender.start()
            results[i] = read_until_closed(sock)
            sender.join()

    with ChildNetProxy(engine, sock_path) as proxy:
        threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(20)
        assert wait_for(lambda: proxy.active_connections == 0)
    assert len(results) == 4 and all(r == payload for r in results.values())


def test_connect_to_an_ipv6_literal(tmp_path: Path, sock_path: Path) -> None:
    try:
        listener = socket.socket(socket.AF_INET6)
        listener.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    listener.listen(1)
    port = listener.getsockname()[1]
    engine = make_engine(tmp_path, {"allowed_ips": [f"[::1]:{port}"]})
    with listener, ChildNetProxy(engine, sock_path), unix_client(sock_path) as sock:
        sock.sendall(f"CONNECT [::1]:{port} HTTP/1.1\r\n\r\n".encode())
        assert read_head(sock).startswith(b"HTTP/1.1 200 ")
        conn, _ = listener.accept()
        with conn:
            sock.sendall(b"over v6")
            assert conn.recv(100) == b"over v6"
    assert audit(engine)[-1]["request"]["addresses"] == ["::1"]


def test_plain_get_is_forwarded_in_origin_form(tmp_path: Path, sock_path: Path, origin: RecordingServer) -> None:
    engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{origin.port}"]})
    request = (
        f"GET http://127.0.0.1:{origin.port}/hello?x=1 HTTP/1.1\r\n"
        "Host: evil.test\r\nProxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\n"
        "Connection: keep-alive, X-Drop\r\nX-Drop: 1\r\nX-Keep: 2\r\n\r\n"
    ).encode()
    with ChildNetProxy(engine, sock_path):
        response = ask(sock_path, request)
    assert response.status == 200 and response.body == b"hello"
    seen = origin.requests[-1]
    assert seen["path"] == "/hello?x=1"  # origin-form
    assert seen["headers"] == {"Host": f"127.0.0.1:{origin.port}", "X-Keep": "2", "Connection": "close"}
    [entry] = audit(engine)
    assert entry["request"]["url"] == f"http://127.0.0.1:{origin.port}/hello?x=1"


def test_plain_responses_say_connection_close(tmp_path: Path, sock_path: Path, origin: RecordingServer) -> None:
    # The origin answers without a Connection header (and one with keep-alive): the child must hear "close",
    # or a keep-alive client would send its next request, maybe for another host, down this pinned connection.
    def keep_alive(h: BaseHTTPRequestHandler) -> None:
        reply(h, 200, b"ka", {"Connection": "keep-alive", "Keep-Alive": "timeout=5", "X-Other": "1"})

    origin.routes["/ka"] = keep_alive
    engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{origin.port}"]})
    with ChildNetProxy(engine, sock_path):
        for path, body in (("/hello", b"hello"), ("/ka", b"ka")):
            with unix_client(sock_path) as sock:
                sock.sendall(f"GET http://127.0.0.1:{origin.port}{path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
                data = b""
                while not data.endswith(b"\r\n\r\n" + body):  # by length, as a client told "close" does
                    data += sock.recv(4096)
            head, _, rest = data.partition(b"\r\n\r\n")
            lines = head.split(b"\r\n")
            assert lines[0] == b"HTTP/1.1 200 OK" and rest == body
            assert [x for x in lines if x.lower().startswith((b"connection", b"keep-alive"))] == [b"Connection: close"]
        assert b"X-Other: 1" in lines


def test_plain_post_body_is_relayed(tmp_path: Path, sock_path: Path, origin: RecordingServer) -> None:
    engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{origin.port}"]})
    body = b'{"a": 1}'
    request = (
        f"POST http://127.0.0.1:{origin.port}/echo HTTP/1.1\r\nHost: x\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    with ChildNetProxy(engine, sock_path):
        response = ask(sock_path, request)
    assert response.status == 200
    assert json.loads(response.body)["body"] == '{"a": 1}'


def test_name_is_resolved_once_and_the_connection_pinned(
    tmp_path: Path, sock_path: Path, origin: RecordingServer
) -> None:
    # A second lookup would answer elsewhere: it must never be made.
    calls: list[str] = []
    # (The second answer is loopback too: were it ever used, nothing would leave the machine.)
    resolver = recording_resolver({"origin.test": [["127.0.0.1"], ["127.0.0.2"]]}, calls)
    engine = make_engine(tmp_path, {"allowed_domains": ["origin.test"], "allowed_ips": ["127.0.0.1"]}, resolver)
    with ChildNetProxy(engine, sock_path):
        response = ask(sock_path, f"GET http://origin.test:{origin.port}/hello HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert response.status == 200 and response.body == b"hello"
    assert calls == ["origin.test"]
    assert origin.requests[-1]["headers"]["Host"] == f"origin.test:{origin.port}"
    assert audit(engine)[-1]["rule"] == "network.allowed_domains"


# --- denied targets: 403 naming the rule, audited, never connected ----------------------------


def denied(engine: PolicyEngine, proxy: ChildNetProxy, path: Path, raw: bytes, rule: str) -> str:
    response = ask(path, raw)
    assert response.status == 403, response
    assert response.headers["x-hugind-rule"] == rule
    text = response.body.decode()
    assert text.count("\n") == 1 and text.startswith(f"denied by {rule}: network: ")
    entry = audit(engine)[-1]
    assert entry["decision"] == "deny" and entry["rule"] == rule
    assert proxy.stats.upstream_connects == 0
    return text


def test_unlisted_port_is_denied_and_audited(tmp_path: Path, sock_path: Path, origin: RecordingServer) -> None:
    engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{origin.port}"]})
    other = free_port()
    with ChildNetProxy(engine, sock_path) as proxy:
        raw = f"CONNECT 127.0.0.1:{other} HTTP/1.1\r\n\r\n".encode()
        assert f"port {other} is not in allowed_ips" in denied(engine, proxy, sock_path, raw, "network.allowed_ips")
        raw = f"GET http://127.0.0.1:{other}/ HTTP/1.1\r\nHost: x\r\n\r\n".encode()
        denied(engine, proxy, sock_path, raw, "network.allowed_ips")
    assert origin.requests == []
    assert engine.denials == 2


def test_unlisted_name_is_denied_without_any_lookup(tmp_path: Path, sock_path: Path) -> None:
    calls: list[str] = []
    engine = make_engine(tmp_path, {"allowed_domains": ["allowed.test"]}, refusing_resolver(calls))
    with ChildNetProxy(engine, sock_path) as proxy:
        denied(engine, proxy, sock_path, b"CONNECT evil.example:443 HTTP/1.1\r\n\r\n", "network.allowed_domains")
        raw = b"GET http://evil.example/x HTTP/1.1\r\nHost: evil.example\r\n\r\n"
        denied(engine, proxy, sock_path, raw, "network.allowed_domains")
    # An entry with a port allows that port only: CONNECT allowed.test:443 is not allowed.test:80.
    engine = make_engine(tmp_path, {"allowed_domains": ["allowed.test:80"]}, refusing_resolver(calls))
    with ChildNetProxy(engine, sock_path) as proxy:
        denied(engine, proxy, sock_path, b"CONNECT allowed.test:443 HTTP/1.1\r\n\r\n", "network.allowed_domains")
    assert calls == []


def test_private_and_always_blocked_ranges(tmp_path: Path, sock_path: Path) -> None:
    # End to end only what stays on this machine if the rule broke (loopback, 0.0.0.0);
    # the private and metadata targets are decided without a socket in the test below.
    engine = make_engine(tmp_path, {"block_private_networks": True}, refusing_resolver([]))  # no host lists
    rule = "network.block_private_networks"
    with ChildNetProxy(engine, sock_path) as proxy:
        assert "127.0.0.0/8" in denied(engine, proxy, sock_path, b"CONNECT 2130706433:80 HTTP/1.1\r\n\r\n", rule)
        denied(engine, proxy, sock_path, b"CONNECT [::ffff:127.0.0.1]:80 HTTP/1.1\r\n\r\n", rule)
        denied(engine, proxy, sock_path, b"CONNECT 0.0.0.0:80 HTTP/1.1\r\n\r\n", "network.blocked-range")


OFF_MACHINE = [
    (b"CONNECT 10.1.2.3:443 HTTP/1.1", "https://10.1.2.3:443/", "10.0.0.0/8"),
    (b"CONNECT [::ffff:192.168.1.1]:443 HTTP/1.1", "https://[::ffff:192.168.1.1]:443/", "192.168.0.0/16"),
    (b"GET http://metadata.test/latest HTTP/1.1\r\nHost: x", "http://metadata.test/latest", "169.254.169.254"),
]


@pytest.mark.parametrize(("head", "url", "fragment"), OFF_MACHINE, ids=["rfc1918", "mapped-private", "metadata"])
def test_private_targets_are_refused_by_the_proxys_decision(tmp_path: Path, head: bytes, url: str, fragment: str):
    """The proxy's decision for a target off this machine, with no socket and no DNS: the URL
    its request parsing yields (``parse_request_head``, ``connect_url``) and the engine's check."""
    calls: list[str] = []
    resolver = recording_resolver({"metadata.test": [["169.254.169.254"]]}, calls)
    engine = make_engine(tmp_path, {"block_private_networks": True}, resolver)
    request = parse_request_head(head)
    checked = connect_url(request.target) if request.method == "CONNECT" else forward_url(request.target)
    assert checked == url
    with pytest.raises(Reply) as info:
        decide(engine, checked)
    assert info.value.status == 403 and info.value.rule == "network.block_private_networks"
    assert fragment in info.value.message
    assert audit(engine)[-1]["decision"] == "deny"
    assert calls == (["metadata.test"] if "metadata" in url else [])


def test_network_off_denies_everything(tmp_path: Path, sock_path: Path) -> None:
    engine = make_engine(tmp_path, {"allow": False})
    with ChildNetProxy(engine, sock_path) as proxy:
        denied(engine, proxy, sock_path, b"CONNECT 127.0.0.1:80 HTTP/1.1\r\n\r\n", "network.allow")


def test_credentials_in_the_url_are_a_policy_denial(tmp_path: Path, sock_path: Path) -> None:
    engine = make_engine(tmp_path, {"allowed_ips": ["127.0.0.1"]})
    with ChildNetProxy(engine, sock_path) as proxy:
        raw = b"GET http://user:pw@127.0.0.1/ HTTP/1.1\r\nHost: x\r\n\r\n"
        assert "credentials" in denied(engine, proxy, sock_path, raw, "network.url")


# --- malformed requests: 400, not audited ----------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b"hello\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",  # origin-form: not a proxy request
        b"GET https://127.0.0.1/ HTTP/1.1\r\n\r\n",  # https needs CONNECT
        b"GET ftp://127.0.0.1/ HTTP/1.1\r\n\r\n",
        b"CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n",  # no port
        b"CONNECT 127.0.0.1:0 HTTP/1.1\r\n\r\n",
        b"CONNECT 127.0.0.1:99999 HTTP/1.1\r\n\r\n",
        b"CONNECT evil.test/x.allowed.test:443 HTTP/1.1\r\n\r\n",
        b"CONNECT user@127.0.0.1:443 HTTP/1.1\r\n\r\n",
        b"CONNECT 127.0.0.1:443 HTTP/2.0\r\n\r\n",
        b"GET http://127.0.0.1/ HTTP/1.1\r\nX: a\r\n folded\r\n\r\n",  # obs-fold
        b"GET http://127.0.0.1/ HTTP/1.1\r\nBad Header: a\r\n\r\n",
        b"GET http://127.0.0.1/ HTTP/1.1\r\nX: a\nY: b\r\n\r\n",  # bare LF
        b"POST http://127.0.0.1/ HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"POST http://127.0.0.1/ HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
    ],
)
def test_malformed_requests_get_400_and_no_decision(tmp_path: Path, sock_path: Path, raw: bytes) -> None:
    engine = make_engine(tmp_path, {"allowed_ips": ["127.0.0.1"]})
    with ChildNetProxy(engine, sock_path) as proxy:
        response = ask(sock_path, raw)
        assert response.status == 400, response
        assert response.body.decode().startswith("proxy: ") and response.body.count(b"\n") == 1
        assert proxy.stats.bad_requests == 1 and proxy.stats.upstream_connects == 0
    assert audit(engine) == []


def test_parse_request_head_keeps_header_order() -> None:
    request = parse_request_head(b"GET http://a.test/ HTTP/1.0\r\nA: 1\r\nB:2 \r\nA: 3")
    assert (request.method, request.target, request.version) == ("GET", "http://a.test/", "HTTP/1.0")
    assert request.headers == (("A", "1"), ("B", "2"), ("A", "3"))


# --- upstream failures and bounds ------------------------------------------------------------


def test_refused_upstream_is_502(tmp_path: Path, sock_path: Path) -> None:
    engine = make_engine(tmp_path, {"allowed_ips": ["127.0.0.1"]})
    port = free_port()
    with ChildNetProxy(engine, sock_path) as proxy:
        response = ask(sock_path, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
        assert proxy.stats.upstream_failures == 1
    assert response.status == 502 and f"port {port}" in response.body.decode()
    assert audit(engine)[-1]["decision"] == "allow"  # the policy said yes; the origin was not there


def test_connect_timeout_is_bounded(tmp_path: Path, sock_path: Path) -> None:
    # A loopback listener whose backlog is full drops further SYNs: connect() would hang without a timeout.
    with socket.socket() as full:
        full.bind(("127.0.0.1", 0))
        full.listen(0)
        port = full.getsockname()[1]
        fillers = []
        for _ in range(4):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            fillers.append(s)
        time.sleep(0.1)
        engine = make_engine(tmp_path, {"allowed_ips": ["127.0.0.1"]})
        with proxy_for(engine, sock_path, connect_timeout=0.5):
            start = time.monotonic()
            response = ask(sock_path, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
            took = time.monotonic() - start
        for s in fillers:
            s.close()
    if response.status == 200:
        pytest.skip("this kernel accepted past the backlog: no hanging connect to provoke on loopback")
    assert response.status == 502 and "timed out" in response.body.decode()
    assert 0.4 < took < 3


def test_header_bomb_is_cut_at_the_cap(tmp_path: Path, sock_path: Path) -> None:
    engine = make_engine(tmp_path, {"allowed_ips": ["127.0.0.1"]})
    with proxy_for(engine, sock_path, max_header_bytes=4096) as proxy, unix_client(sock_path) as sock:
        sock.sendall(b"GET http://127.0.0.1/ HTTP/1.1\r\n")
        sent = 0
        with pytest.raises(OSError):  # the proxy answers and closes while we are still sending
            while sent < 10 << 20:
                sock.sendall(b"X-Bomb: " + b"a" * 1000 + b"\r\n")
                sent += 1010
        assert sent < 1 << 20
        assert wait_for(lambda: proxy.active_connections == 0)
        assert proxy.stats.bad_requests == 1
    many = b"GET http://127.0.0.1/ HTTP/1.1\r\n" + b"X: 1\r\n" * 150 + b"\r\n"
    with ChildNetProxy(engine, sock_path):
        response = ask(sock_path, many)
    assert response.status == 431 and b"header lines" in response.body
    with proxy_for(engine, sock_path, max_header_bytes=4096):
        response = ask(sock_path, b"GET http://127.0.0.1/ HTTP/1.1\r\nX: " + b"a" * 5000 + b"\r\n\r\n")
    assert response.status == 431
    assert audit(engine) == []


def test_slowloris_is_timed_out(tmp_path: Path, sock_path: Path) -> None:
    engine = make_engine(tmp_path, {"allowed_ips": ["127.0.0.1"]})
    with proxy_for(engine, sock_path, header_timeout=0.5) as proxy, unix_client(sock_path) as sock:
        start = time.monotonic()
        with pytest.raises(OSError):
            for ch in b"GET http://127.0.0.1/ HTTP/1.1\r\nX-Slow: " + b"z" * 100:
                sock.send(bytes([ch]))
                time.sleep(0.05)
        took = time.monotonic() - start
        assert 0.4 < took < 2
        assert wait_for(lambda: proxy.active_connections == 0)
        assert proxy.stats.bad_requests == 1
    with proxy_for(engine, sock_path, header_timeout=0.3), unix_client(sock_path) as sock:
        sock.sendall(b"GET http://127.0.0.1/ HTTP/1.1\r\n")  # then nothing
        assert read_until_closed(sock).startswith(b"HTTP/1.1 408 ")


def test_connections_over_the_cap_get_503_at_once(tmp_path: Path, sock_path: Path) -> None:
    engine = make_engine(tmp_path, {"allowed_ips": ["127.0.0.1"]})
    with proxy_for(engine, sock_path, max_connections=2) as proxy:
        idle = [unix_client(sock_path), unix_client(sock_path)]
        assert wait_for(lambda: proxy.active_connections == 2)
        start = time.monotonic()
        with unix_client(sock_path) as third:  # answered before it says anything
            response = parse_response(read_until_closed(third))
        assert response.status == 503 and time.monotonic() - start < 1
        assert proxy.stats.busy == 1
        for s in idle:
            s.close()
        assert wait_for(lambda: proxy.active_connections == 0)


def test_idle_tunnel_is_closed(tmp_path: Path, sock_path: Path) -> None:
    silent = TcpOrigin("silent")
    try:
        engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{silent.port}"]})
        with proxy_for(engine, sock_path, idle_timeout=0.5), unix_client(sock_path) as sock:
            sock.sendall(f"CONNECT 127.0.0.1:{silent.port} HTTP/1.1\r\n\r\n".encode())
            assert read_head(sock).startswith(b"HTTP/1.1 200 ")
            start = time.monotonic()
            assert read_until_closed(sock) == b""
            assert 0.4 < time.monotonic() - start < 2
    finally:
        silent.close()


def test_max_bytes_cuts_a_connection(tmp_path: Path, sock_path: Path, origin: RecordingServer) -> None:
    engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{origin.port}"]})
    with proxy_for(engine, sock_path, max_bytes=10_000, buffer_bytes=4096), unix_client(sock_path) as sock:
        sock.sendall(f"GET http://127.0.0.1:{origin.port}/big HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        data = read_until_closed(sock)
    assert data.startswith(b"HTTP/1.1 200 ") and len(data) < 20_000  # of 300 kB


def test_close_with_open_tunnels_returns_promptly(tmp_path: Path, sock_path: Path) -> None:
    silent = TcpOrigin("silent")
    try:
        engine = make_engine(tmp_path, {"allowed_ips": [f"127.0.0.1:{silent.port}"]})
        proxy = ChildNetProxy(engine, sock_path)
        proxy.start()
        clients = []
        for _ in range(5):
            sock = unix_client(sock_path)
            sock.sendall(f"CONNECT 127.0.0.1:{silent.port} HTTP/1.1\r\n\r\n".encode())
            assert read_head(sock).startswith(b"HTTP/1.1 200 ")
            clients.append(sock)
        slow = unix_client(sock_path)
        slow.sendall(b"GET http://127.0.0.1/ HTTP/1.1\r\n")  # stuck in the head
        assert wait_for(lambda: proxy.active_connections == 6)
        start = time.monotonic()
        proxy.close()
        assert time.monotonic() - start < 1.0
        assert proxy.active_connections == 0
        assert not sock_path.exists()
        for sock in [*clients, slow]:
            with contextlib.suppress(ConnectionResetError):  # a reset if the proxy had not read all yet
                assert read_until_closed(sock, 2) == b""
            sock.close()
        with pytest.raises(OSError):
            unix_client(sock_path)
        proxy.close()  # idempotent
    finally:
        silent.close()


# --- what the child is given -----------------------------------------------------------------


def test_proxy_env_points_every_variable_at_the_forwarder() -> None:
    env = proxy_env(3128)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        assert env[name] == "http://127.0.0.1:3128"
    assert env["NO_PROXY"] == env["no_proxy"] == ""
    with pytest.raises(ValueError):
        proxy_env(0)


def test_forwarder_argv() -> None:
    argv = forwarder_argv(3128, "/run/p.sock", ["git", "fetch"])
    script = str(FORWARDER_PATH)
    assert argv == ["python3", "-I", "-S", script, "--port", "3128", "--unix", "/run/p.sock", "--", "git", "fetch"]
    assert FORWARDER_PATH.is_file()
