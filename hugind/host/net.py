"""``net.fetch``: HTTP(S) requests the policy has allowed, pinned to the checked address.

The policy parses the URL, matches the host, resolves it once and classifies
every address. The request then goes to that address itself (the URL's host
replaced by the IP, the ``Host`` header and TLS SNI/certificate name set to
the original name), so a second DNS answer cannot move it (no rebinding
window). Redirects are followed by hand (unless the guest asks for
``redirect: "manual"``: the 3xx is then the answer), at most ``max_redirects`` hops,
each hop checked again; ``Authorization``/``Cookie`` are dropped when the
origin changes. The body is streamed and decoded here with a bounded
inflater, counting decoded bytes against ``max_response_bytes``, so neither a
body without length nor a compression bomb can exhaust memory. Proxy
variables are ignored (``trust_env=False``). Bodies cross as text, or as
base64 where text would not be exact (http_body.py).
"""

from __future__ import annotations

import threading
import time
import zlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from hugind.errors import HostIOError, InvalidArgument, LimitHit, PermissionDenied, Timeout
from hugind.host.http_body import chunk_event, request_body, response_body
from hugind.host.registry import HostContext, Op, arg

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
REDIRECTS = frozenset({301, 302, 303, 307, 308})
# Headers the guest may not set: hugind owns framing, routing and encoding.
RESERVED_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "upgrade",
        "te",
        "trailer",
        "proxy-authorization",
        "proxy-connection",
        "accept-encoding",
    }
)
CREDENTIAL_HEADERS = frozenset({"authorization", "cookie"})
MAX_REQUEST_BODY = 16 * 1024 * 1024
OUT_CHUNK = 1 << 16  # most bytes one inflate step may produce
_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


class BoundedDecoder:
    """Content-Encoding decoder that never produces more than OUT_CHUNK bytes per step."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding.strip().lower()
        if "," in self.encoding:
            raise HostIOError(f"network: stacked content-encodings are not supported ({encoding!r})")
        if self.encoding not in ("", "identity", "gzip", "x-gzip", "deflate"):
            raise HostIOError(f"network: unsupported content-encoding {encoding!r}")
        self._z: Any = None
        if self.encoding in ("gzip", "x-gzip"):
            self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self.encoding in ("", "identity"):
            if data:
                yield data
            return
        if self._z is None:  # deflate: zlib-wrapped per the RFC, raw in practice too
            zlib_header = len(data) >= 2 and data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0
            self._z = zlib.decompressobj(zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS)
        try:
            while True:
                out = self._z.decompress(data, OUT_CHUNK)
                if out:
                    yield out
                data = self._z.unconsumed_tail
                if data:
                    continue
                if self._z.eof and self._z.unused_data and self.encoding != "deflate":
                    data = self._z.unused_data  # another gzip member
                    self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)
                    continue
                if not out:
                    return
        except zlib.error as exc:
            raise HostIOError(f"network: corrupt {self.encoding} body ({exc})") from None


def _headers(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise InvalidArgument("argument 'headers' must be an object of strings")
    out: dict[str, str] = {}
    for name, text in value.items():
        if not isinstance(name, str) or not isinstance(text, str):
            raise InvalidArgument("argument 'headers' must map strings to strings")
        if not name or not set(name) <= _TOKEN:
            raise InvalidArgument(f"invalid header name {name!r}")
        if any(c in text for c in "\r\n\0"):
            raise InvalidArgument(f"header {name!r} contains a line break or NUL")
        if not text.isascii():
            raise InvalidArgument(f"header {name!r} must be ASCII")
        if name.lower() not in RESERVED_HEADERS:
            out[name] = text
    return out


def _ip_url(target: Any, address: str) -> str:
    host = f"[{address}]" if ":" in address else address
    return f"{target.scheme}://{host}:{target.port}{target.target}"


if TYPE_CHECKING:
    import ssl

    import httpx

_tls: ssl.SSLContext | None = None
_tls_lock = threading.Lock()


def _tls_context() -> ssl.SSLContext:
    """One verifying TLS context per process (httpx's defaults: certifi's CA bundle).

    A client made per request would load the CA bundle per request (~10-30 ms of
    libcrypto work each); an SSLContext is safe to share between threads."""
    global _tls
    with _tls_lock:
        if _tls is None:
            import ssl

            import certifi

            _tls = ssl.create_default_context(cafile=certifi.where())
        return _tls


def _send(client: httpx.Client, target: Any, method: str, headers: dict[str, str], body: bytes | None) -> Any:
    """Send to the first checked address that accepts the connection."""
    import httpx

    extensions = {"sni_hostname": target.host} if target.scheme == "https" and not target.is_ip else {}
    last: Exception | None = None
    for address in target.addresses:
        request = client.build_request(
            method,
            _ip_url(target, address),
            headers={**headers, "Host": target.host_header, "Accept-Encoding": "gzip, deflate"},
            content=body,
            extensions=extensions,
        )
        try:
            return client.send(request, stream=True)
        except httpx.ConnectError as exc:
            last = exc
    raise HostIOError(f"network: cannot connect to {target.host} port {target.port}") from last


def _read_body(response: Any, cap: int, deadline: float, ctx: HostContext, emit: Callable[[bytes], None]) -> int:
    """Hand each piece of the decoded body to ``emit`` as it arrives, within ``cap`` bytes; the
    body's length."""
    decoder = BoundedDecoder(response.headers.get("content-encoding", ""))
    total = 0
    for raw in response.iter_raw():
        pieces = []
        for piece in decoder.feed(raw):
            total += len(piece)
            if total > cap:
                raise LimitHit(f"network: response body exceeds max_response_bytes ({cap} bytes)")
            pieces.append(piece)
        if pieces:
            emit(b"".join(pieces))
        if time.monotonic() > deadline:
            raise Timeout("network: the response did not finish within the timeout")
        if ctx.cancelled.is_set():
            raise Timeout("network: the run was cancelled")
    return total


def _response_headers(response: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in response.headers.multi_items():
        key = name.lower()
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def _reason(response: Any) -> str:
    """The server's reason phrase as h11 parsed it, or "" when it is not printable Latin-1 text."""
    reason = response.reason_phrase
    return reason if all(c == "\t" or " " <= c <= "~" or "\x80" <= c <= "\xff" for c in reason) else ""


def _fetch_stream(ctx: HostContext, args: dict[str, Any], progress: Callable[[Any], None]) -> dict[str, Any]:
    """``net.fetch`` whose answer arrives as it comes: a ``head`` event (status, headers, url),
    then each piece of the body as a ``chunk`` (or ``chunk_base64``) event; the reply is the
    body's length. What the policy checks, and how, is ``net.fetch``'s."""
    return _fetch(ctx, args, progress)


def _fetch(ctx: HostContext, args: dict[str, Any], progress: Callable[[Any], None] | None = None) -> dict[str, Any]:
    url = arg(args, "url", str)
    method = arg(args, "method", str, "GET").upper()
    if method not in METHODS:
        raise InvalidArgument(f"unsupported HTTP method {method!r}")
    headers = _headers(arg(args, "headers", dict, {}))
    body = request_body(args, MAX_REQUEST_BODY)
    redirect = arg(args, "redirect", str, "follow")
    if redirect not in ("follow", "manual"):
        raise InvalidArgument(f"argument 'redirect' must be 'follow' or 'manual', got {redirect!r}")
    engine = ctx.policy
    if engine is None:
        raise PermissionDenied("network: no policy is in force")
    net = engine.policy.net
    budget = min(net.timeout, ctx.remaining())
    if budget <= 0 or ctx.cancelled.is_set():
        raise Timeout("network: the run's deadline has passed")
    deadline = time.monotonic() + budget
    target = engine.check_connect(url)
    hops = 0
    import httpx  # deferred: most runs never fetch, and httpx costs ~0.1 s to import

    with httpx.Client(trust_env=False, follow_redirects=False, http2=False, verify=_tls_context()) as client:
        while True:
            status, location, result = _hop(
                client, target, method, headers, body, deadline, ctx, redirect == "follow", progress
            )
            if result is not None:
                return result
            if hops >= net.max_redirects:
                raise LimitHit(f"network: more than {net.max_redirects} redirects (last from {target.url})")
            hops += 1
            try:
                next_url = urljoin(target.url, location)
            except ValueError:  # e.g. "http://[::1/": the policy refuses it as a malformed URL (audited)
                next_url = location
            following = engine.check_connect(next_url)
            if following.origin != target.origin:
                headers = {k: v for k, v in headers.items() if k.lower() not in CREDENTIAL_HEADERS}
            if status == 303 or (status in (301, 302) and method == "POST"):
                method, body = ("HEAD" if method == "HEAD" else "GET"), None
                headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
            target = following


def _hop(
    client: httpx.Client,
    target: Any,
    method: str,
    headers: dict[str, str],
    body: bytes | None,
    deadline: float,
    ctx: HostContext,
    follow: bool,
    progress: Callable[[Any], None] | None,
) -> tuple[int, str, dict[str, Any] | None]:
    """One request: (status, location, None) for a redirect to follow, else the final result
    (a redirect itself when not following: ``redirect: "manual"``), whole or, given
    ``progress``, streamed through it."""
    import httpx

    left = deadline - time.monotonic()
    if left <= 0:
        raise Timeout(f"network: no answer from {target.host} within the timeout")
    client.timeout = httpx.Timeout(left)
    try:
        response = _send(client, target, method, headers, body)
        try:
            location = response.headers.get("location")
            if follow and response.status_code in REDIRECTS and location:
                return response.status_code, location, None
            cap = ctx.policy.policy.net.max_response_bytes
            head = {
                "status": response.status_code,
                "status_text": _reason(response),
                "headers": _response_headers(response),
            }
            if progress is not None:
                progress({"head": {**head, "url": target.url}})
                length = 0
                if method != "HEAD":
                    length = _read_body(response, cap, deadline, ctx, lambda piece: progress(chunk_event(piece)))
                return response.status_code, "", {"length": length}
            parts: list[bytes] = []
            if method != "HEAD":
                _read_body(response, cap, deadline, ctx, parts.append)
            return response.status_code, "", {**head, **response_body(b"".join(parts)), "url": target.url}
        finally:
            response.close()
    except httpx.TimeoutException:
        raise Timeout(f"network: no answer from {target.host} within the timeout") from None
    except httpx.InvalidURL as exc:
        raise InvalidArgument(f"network: the URL cannot be sent ({exc})") from None
    except httpx.HTTPError as exc:
        raise HostIOError(f"network: request to {target.host} failed ({exc.__class__.__name__})") from None


OPS: tuple[Op, ...] = (
    Op("net.fetch", _fetch, is_async=True, blocking=True),
    Op("net.fetch_stream", _fetch_stream, is_async=True, streams=True),
)
