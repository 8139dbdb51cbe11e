"""hugind/confine/proxy/parse.py at its edges: the limits of a child's request head at their
boundary, the exact refusals, a Host-less CONNECT, and which headers cross the proxy each way.

Written against the survivors of a mutation run (bench/mutation.py confine.proxy.parse). The
parser is h11 itself, driven with the bytes a child or an origin would send; no socket.
"""

from __future__ import annotations

import h11
import pytest

from hugind.confine.proxy.base import Drop, ProxyLimits, Reply
from hugind.confine.proxy.parse import (
    ChildParser,
    ProxyRequest,
    child_informational,
    child_response,
    origin_parser,
    origin_request,
    parse_request_head,
)
from hugind.policy.net import NetTarget


def refused(parser: ChildParser) -> Reply:
    with pytest.raises(Reply) as caught:
        parser.next_request()
    return caught.value


def fed(data: bytes, **limits: int) -> ChildParser:
    parser = ChildParser(ProxyLimits(**limits))
    parser.feed(data)
    return parser


# -- the head's limits, at their boundary -------------------------------------------------------


def test_exactly_max_header_lines_headers_pass_and_one_more_is_refused() -> None:
    head = b"GET http://a/ HTTP/1.1\r\nHost: a\r\nX-1: 1\r\nX-2: 2\r\n\r\n"
    assert len(fed(head, max_header_lines=3).next_request().headers) == 3
    reply = refused(fed(head, max_header_lines=2))
    assert (reply.status, reply.message) == (431, "proxy: more than 2 header lines")


def test_an_incomplete_head_past_max_header_bytes_is_refused_before_it_ends() -> None:
    # h11's own bound on a head still arriving is the proxy's max_header_bytes, not h11's default.
    parser = fed(b"GET http://a/ HTTP/1.1\r\nX: " + b"a" * 200, max_header_bytes=100)
    reply = refused(parser)
    assert (reply.status, reply.message) == (431, "proxy: Receive buffer too long")
    assert fed(b"GET http://a/ HTTP/1.1\r\nX: " + b"a" * 50, max_header_bytes=100).next_request() is None


def test_the_origins_response_head_is_bounded_by_max_response_head_bytes() -> None:
    conn = origin_parser(ProxyLimits(max_response_head_bytes=100))
    conn.send(h11.Request(method="GET", target="/", headers=[("Host", "a")]))
    conn.receive_data(b"HTTP/1.1 200 OK\r\nX: " + b"a" * 200)
    with pytest.raises(h11.RemoteProtocolError, match="Receive buffer too long"):
        conn.next_event()


def test_both_framing_headers_are_refused_with_the_smuggling_message() -> None:
    reply = refused(
        fed(b"POST http://a/ HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n")
    )
    assert (reply.status, reply.message) == (
        400,
        "proxy: both Content-Length and Transfer-Encoding (refused: request smuggling)",
    )


def test_a_child_that_hangs_up_mid_head_is_dropped_not_answered() -> None:
    parser = fed(b"GET http://a/ HTTP/1.1\r\nHost: a\r\nX-Half: ")
    assert parser.next_request() is None
    parser.feed(b"")
    assert parser.eof is True
    with pytest.raises(Drop):
        parser.next_request()


# -- a CONNECT without Host ---------------------------------------------------------------------


def test_a_hostless_connect_keeps_the_childs_headers_and_not_the_placeholder() -> None:
    request = fed(b"CONNECT a:443 HTTP/1.1\r\nX-A: 1\r\nX-B: 2\r\n\r\n").next_request()
    assert request == ProxyRequest("CONNECT", "a:443", "HTTP/1.1", (("X-A", "1"), ("X-B", "2")))
    bare = fed(b"CONNECT a:443 HTTP/1.1\r\n\r\n").next_request()
    assert bare.headers == ()


def test_a_hostless_connects_lines_are_counted_without_the_placeholder() -> None:
    head = b"CONNECT a:443 HTTP/1.1\r\nX-A: 1\r\nX-B: 2\r\n\r\n"
    assert len(fed(head, max_header_lines=2).next_request().headers) == 2
    assert refused(fed(head, max_header_lines=1)).message == "proxy: more than 1 header lines"


def test_a_hostless_connects_size_is_its_own_head_not_the_tunnel_bytes_behind_it() -> None:
    head = b"CONNECT a:443 HTTP/1.1\r\nX-A: 1\r\n\r\n"
    early = b"\x16\x03\x01" + b"t" * 60  # the tunnel's first bytes, sent before the proxy's 200
    parser = fed(head + early, max_header_bytes=len(head))
    assert parser.next_request().target == "a:443"
    assert parser.end_of_connect() == (early, False)
    reply = refused(fed(head + early, max_header_bytes=len(head) - 1))
    assert (reply.status, reply.message) == (431, f"proxy: request head larger than {len(head) - 1} bytes")


# -- after a CONNECT head -----------------------------------------------------------------------


def test_a_connect_with_a_body_is_refused_with_its_message() -> None:
    parser = fed(b"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\nContent-Length: 3\r\n\r\nabc")
    assert parser.next_request().method == "CONNECT"
    with pytest.raises(Reply) as caught:
        parser.end_of_connect()
    assert (caught.value.status, caught.value.message) == (400, "proxy: a CONNECT request cannot have a body")


def test_a_connect_with_a_malformed_body_is_a_400_naming_h11s_cause() -> None:
    parser = fed(b"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
    assert parser.next_request().method == "CONNECT"
    with pytest.raises(Reply) as caught:
        parser.end_of_connect()
    assert caught.value.status == 400
    assert caught.value.message.startswith("proxy: illegal chunk header")


# -- parse_request_head -------------------------------------------------------------------------


def _head_with(lines: int) -> bytes:
    return b"GET http://a/ HTTP/1.1\r\nHost: a" + b"".join(b"\r\nX-%d: v" % i for i in range(lines - 1))


def test_parse_request_head_allows_100_lines_by_default_and_the_limit_given() -> None:
    assert len(parse_request_head(_head_with(100)).headers) == 100
    with pytest.raises(Reply) as caught:
        parse_request_head(_head_with(101))
    assert (caught.value.status, caught.value.message) == (431, "proxy: more than 100 header lines")
    with pytest.raises(Reply) as caught:
        parse_request_head(_head_with(3), max_lines=2)
    assert caught.value.message == "proxy: more than 2 header lines"


def test_parse_request_head_takes_a_head_of_any_size() -> None:
    # Larger than ProxyLimits' default max_header_bytes (32 KiB): the head given is the bound.
    big = b"GET http://a/ HTTP/1.1\r\nHost: a\r\nX-Big: " + b"b" * 40_000
    assert parse_request_head(big).headers[1] == ("X-Big", "b" * 40_000)


# -- headers toward the origin ------------------------------------------------------------------


def _target() -> NetTarget:
    return NetTarget("http://a/p", "http", "a", 80, "/p", ("127.0.0.1",), False)


def _names(headers: list[tuple[bytes, bytes]] | object) -> list[bytes]:
    return [name for name, _ in headers]  # type: ignore[attr-defined]


def test_every_connection_header_strips_what_it_lists() -> None:
    request = ProxyRequest(
        "GET",
        "http://a/p",
        "HTTP/1.1",
        (
            ("Host", "a"),
            ("Connection", "X-One"),
            ("Connection", "X-Two,X-Three"),
            ("X-One", "1"),
            ("X-Two", "2"),
            ("X-Three", "3"),
            ("X-Kept", "4"),
        ),
    )
    sent = origin_request(request, _target())
    assert list(sent.headers.raw_items()) == [(b"Host", b"a"), (b"X-Kept", b"4"), (b"Connection", b"close")]


# -- headers toward the child -------------------------------------------------------------------


def test_a_chunked_responses_content_length_is_dropped_and_the_rest_kept() -> None:
    event = h11.Response(
        status_code=200,
        headers=[
            ("Content-Type", "text/plain"),
            ("Transfer-Encoding", "chunked"),
            ("Content-Length", "5"),
            ("X-After", "1"),
        ],
    )
    assert list(child_response(event, close=False).headers.raw_items()) == [
        (b"Content-Type", b"text/plain"),
        (b"X-After", b"1"),
    ]


def test_an_unchunked_responses_content_length_is_kept() -> None:
    event = h11.Response(status_code=200, headers=[("Content-Length", "5"), ("X-After", "1")])
    assert list(child_response(event, close=True).headers.raw_items()) == [
        (b"Content-Length", b"5"),
        (b"X-After", b"1"),
        (b"Connection", b"close"),
    ]


def test_proxy_connection_never_reaches_the_child() -> None:
    event = h11.Response(status_code=200, headers=[("Proxy-Connection", "keep-alive"), ("X-A", "1")])
    assert _names(child_response(event, close=False).headers.raw_items()) == [b"X-A"]


def test_an_informational_response_keeps_its_reason() -> None:
    event = h11.InformationalResponse(status_code=100, reason=b"Continue", headers=[("X-A", "1")])
    passed = child_informational(event)
    assert (passed.status_code, passed.reason, list(passed.headers.raw_items())) == (100, b"Continue", [(b"X-A", b"1")])
