"""Parsing, by h11: the child's requests in, the heads the proxy sends on out.

The proxy never forwards bytes it has not parsed (a tunnel after its CONNECT
aside): each side has its own h11 connection, and what goes out is what h11
writes from the events the other side's h11 read. So framing (one
Content-Length or chunked, valid chunks, bounded heads) is h11's, and the
origin can never read a request boundary other than the one the proxy decided on.

On top of h11 the proxy adds its own rules, all checked before the policy is
asked (a malformed request is not a decision to audit):

* a head is at most ``max_header_bytes`` (h11 bounds only a head still
  arriving; a complete one that came in a single read is measured here) and
  ``max_header_lines`` headers;
* HTTP/1.0 or 1.1 only;
* Content-Length together with Transfer-Encoding is refused: h11 would let
  chunked win (RFC 9112 6.3), but no honest client sends both, and RFC 9112
  allows treating it as the smuggling attempt it usually is;
* ``Host`` may be missing on a CONNECT (clients differ; the tunnel's target is
  its authority); any other request without one is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import h11

from hugind.confine.proxy.base import Drop, ProxyLimits, Reply

if TYPE_CHECKING:
    from hugind.policy.net import NetTarget

# Headers that concern one hop only (RFC 9110 7.6.1), and those the proxy sets itself.
_HOP = frozenset({b"connection", b"keep-alive", b"te", b"trailer", b"transfer-encoding", b"upgrade", b"host"})
# Framing: a Connection header may not strip these (h11 frames each side from them).
_FRAMING = frozenset({b"content-length", b"transfer-encoding"})
# h11 raises this for an HTTP/1.1 request without Host (its text since h11 0.7); see ChildParser._without_host.
_NO_HOST = "Missing mandatory Host: header"
_PLACEHOLDER = b"Host: hugind-proxy.invalid\r\n"


@dataclass(frozen=True)
class ProxyRequest:
    method: str
    target: str  # the authority for CONNECT, the absolute URL otherwise
    version: str  # "HTTP/1.0" or "HTTP/1.1"
    headers: tuple[tuple[str, str], ...]  # as the child wrote them (names' case kept, values trimmed)


class ChildParser:
    """The h11 server connection that reads the child's requests, with the proxy's own rules on them."""

    def __init__(self, limits: ProxyLimits) -> None:
        self.limits = limits
        self.h11 = self._fresh()
        self.eof = False

    def _fresh(self) -> h11.Connection:
        return h11.Connection(h11.SERVER, max_incomplete_event_size=self.limits.max_header_bytes)

    def feed(self, data: bytes) -> None:
        """Bytes from the child; ``b""`` when it hung up."""
        if not data:
            self.eof = True
        self.h11.receive_data(data)

    def next_request(self) -> ProxyRequest | None:
        """The next request head, or None until more bytes come; Reply if malformed, Drop if the child left."""
        pending = self.h11.trailing_data[0]  # this head and what follows it: to measure it, or to retry it
        try:
            event = self.h11.next_event()
        except h11.RemoteProtocolError as exc:
            if self.eof:
                raise Drop from None  # hung up mid-head: nobody to answer
            if str(exc) != _NO_HOST:
                raise Reply(exc.error_status_hint, f"proxy: {exc}") from None
            return self._without_host(pending)
        if event is h11.NEED_DATA:
            return None
        if not isinstance(event, h11.Request):  # ConnectionClosed: the child left between requests
            raise Drop
        return self._checked(event, len(pending) - len(self.h11.trailing_data[0]), supplied=False)

    def _without_host(self, pending: bytes) -> ProxyRequest:
        """Parse again with a placeholder Host after the request line, which h11 has already accepted.

        h11 refuses an HTTP/1.1 request without Host before it returns it; a CONNECT needs none
        here (it is decided on its authority, and the proxy never forwards a child's Host), and
        common clients omit it. Anything else without Host is refused once the head is known.
        """
        cut = pending.index(b"\n") + 1
        self.h11 = self._fresh()
        self.h11.receive_data(pending[:cut] + _PLACEHOLDER + pending[cut:])
        if self.eof:
            self.h11.receive_data(b"")
        try:
            event = self.h11.next_event()
        except h11.RemoteProtocolError as exc:
            raise Reply(exc.error_status_hint, f"proxy: {exc}") from None
        if not isinstance(event, h11.Request):  # cannot happen: the same head parsed up to Host before
            raise Reply(400, "proxy: malformed request head")
        # What h11 consumed, less the placeholder: the head as the child sent it.
        size = len(pending) - len(self.h11.trailing_data[0])
        return self._checked(event, size, supplied=True)

    def _checked(self, event: h11.Request, size: int, *, supplied: bool) -> ProxyRequest:
        limits = self.limits
        if size > limits.max_header_bytes:
            raise Reply(431, f"proxy: request head larger than {limits.max_header_bytes} bytes")
        items = event.headers.raw_items()[1:] if supplied else event.headers.raw_items()
        if len(items) > limits.max_header_lines:
            raise Reply(431, f"proxy: more than {limits.max_header_lines} header lines")
        method = event.method.decode("ascii")
        if event.http_version not in (b"1.0", b"1.1"):
            raise Reply(400, f"proxy: HTTP/{event.http_version.decode('ascii')} is not supported (1.0 and 1.1 are)")
        if supplied and method != "CONNECT":
            raise Reply(400, "proxy: an HTTP/1.1 request needs a Host header")
        names = {name.lower() for name, _ in items}
        if b"content-length" in names and b"transfer-encoding" in names:
            raise Reply(400, "proxy: both Content-Length and Transfer-Encoding (refused: request smuggling)")
        headers = tuple((name.decode("latin-1"), value.decode("latin-1")) for name, value in items)
        return ProxyRequest(method, event.target.decode("ascii"), f"HTTP/{event.http_version.decode()}", headers)

    def end_of_connect(self) -> tuple[bytes, bool]:
        """After a CONNECT head: the bytes the child sent past it, and whether it has hung up already.

        A CONNECT carries no body; one that declares a body is refused rather than guessed at.
        """
        try:
            event = self.h11.next_event()
        except h11.RemoteProtocolError as exc:
            raise Reply(400, f"proxy: {exc}") from None
        if not isinstance(event, h11.EndOfMessage):
            raise Reply(400, "proxy: a CONNECT request cannot have a body")
        return self.h11.trailing_data


def parse_request_head(head: bytes, max_lines: int = 100) -> ProxyRequest:
    """The request in ``head`` (without its final blank line), parsed as the proxy parses a child's."""
    parser = ChildParser(ProxyLimits(max_header_lines=max_lines, max_header_bytes=max(len(head) + 4, 1)))
    parser.feed(head + b"\r\n\r\n")
    request = parser.next_request()
    if request is None:
        raise Reply(400, "proxy: incomplete request head")
    return request


def _listed(items: list[tuple[bytes, bytes]]) -> set[bytes]:
    """The names a Connection header declares hop-by-hop (never the framing ones)."""
    listed: set[bytes] = set()
    for name, value in items:
        if name.lower() == b"connection":
            listed |= {part.strip().lower() for part in value.split(b",")}
    return listed - _FRAMING


def origin_request(request: ProxyRequest, target: NetTarget) -> h11.Request:
    """The request the origin gets: origin-form, Host from the checked URL, no proxy or hop headers.

    Content-Length or Transfer-Encoding stay: h11 frames the relayed body by them.
    """
    items = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in request.headers]
    listed = _listed(items)
    headers = [(b"Host", target.host_header.encode("ascii"))]
    for name, value in items:
        key = name.lower()
        if key in _FRAMING or not (key in _HOP or key in listed or key.startswith(b"proxy-")):
            headers.append((name, value))
    headers.append((b"Connection", b"close"))  # one request per origin connection: each one is decided alone
    return h11.Request(method=request.method, target=target.target, headers=headers)


def _child_headers(event: h11.Response | h11.InformationalResponse) -> list[tuple[bytes, bytes]]:
    items = event.headers.raw_items()
    listed = _listed(items)
    chunked = any(name.lower() == b"transfer-encoding" for name, _ in items)
    kept = []
    for name, value in items:
        key = name.lower()
        if key in _HOP or key in listed or key == b"proxy-connection":
            continue
        if key == b"content-length" and chunked:  # h11 decoded the chunks: that length is not this body's
            continue
        kept.append((name, value))
    return kept


def child_response(event: h11.Response, close: bool) -> h11.Response:
    """The origin's response head as the child gets it; h11 picks the framing toward the child.

    ``close``: say ``Connection: close`` (the child's connection ends after this response).
    """
    headers = _child_headers(event)
    if close:
        headers.append((b"Connection", b"close"))
    return h11.Response(status_code=event.status_code, reason=event.reason, headers=headers)


def child_informational(event: h11.InformationalResponse) -> h11.InformationalResponse:
    """A 1xx (100 Continue and friends) passed on; the final head is still to come."""
    return h11.InformationalResponse(status_code=event.status_code, reason=event.reason, headers=_child_headers(event))


def origin_parser(limits: ProxyLimits) -> h11.Connection:
    """The h11 client connection toward the origin, for one request."""
    return h11.Connection(h11.CLIENT, max_incomplete_event_size=limits.max_response_head_bytes)
