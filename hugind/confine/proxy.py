"""The network door of a confined child: an HTTP proxy on a Unix socket, decided by the policy engine.

A confined child runs in its own empty network namespace. The only way out is
a Unix socket (bind-mounted into its sandbox) served by :class:`ChildNetProxy`
on the host side; inside the namespace ``forwarder.py`` listens on
``127.0.0.1:PORT`` and relays every TCP connection to that socket, and the
child gets ``HTTP_PROXY``/``HTTPS_PROXY``/... pointing at the forwarder
(:func:`proxy_env`).

The proxy speaks the HTTP/1.1 proxy protocol:

* ``CONNECT host:port`` opens a tunnel (any protocol, typically TLS). The
  target is checked as ``https://host:port/``.
* An absolute-form request ``METHOD http://host[:port]/path HTTP/1.x`` is
  forwarded to the origin in origin-form. The target is checked as that URL.
  ``Host`` is set from the checked URL, ``Proxy-*`` and hop-by-hop headers are
  dropped, ``Connection: close`` is added; after the request head, bytes are
  relayed as they are in both directions.

**Every target goes through ``engine.check_connect``**, so it is matched,
resolved once, classified and audited by the one policy engine, exactly like
``net.fetch``; the proxy then connects only to the pinned, checked addresses
(never resolving again). A refusal is a ``403`` whose one-line body names the
rule; a request the proxy cannot parse is a ``400`` (not audited: there is no
target to decide on); a checked target that cannot be reached is a ``502``.

Scheme and port: the policy decides on host and port; the scheme only gives a
default port, and the proxy always has an explicit one (CONNECT must name a
port; an absolute URL without one means 80). So ``CONNECT example.com:443`` and
``fetch("https://example.com/")`` are the same decision, and an
``allowed_domains`` entry without ``:port`` lets a child tunnel to **any** port
of that host, with any protocol (ssh on 22 included): write
``example.com:443`` to allow TLS only. Absolute-form requests must be
``http://`` (an ``https://`` URL needs TLS, which is the child's job through
CONNECT); other schemes are a ``400``.

Bounds, so that nothing hangs and ``close()`` is prompt: the request head must
arrive within ``header_timeout`` and fit in ``max_header_bytes`` (else 408 /
431); connecting to the origin is bounded by ``engine.policy.net.timeout``;
a connection where no byte moves for ``idle_timeout`` is closed; at most
``max_connections`` connections are served at once (more get a 503 at once);
every wait also watches a stop pipe that ``close()`` closes. Bytes are not
capped by default: the proxy streams through fixed buffers (its memory is
bounded by connections x buffers), a TLS tunnel is opaque anyway, and the
fetch cap ``max_response_bytes`` counts decoded bodies, which a relay never
sees; capping plain HTTP alone would only push children to HTTPS. Set
``ProxyLimits.max_bytes`` to cap what one connection may bring in.

Unlike ``net.fetch``, the proxy does not follow redirects (the child does, and
each new target comes back through here and is checked again), does not
decode bodies, and leaves request headers to the child except ``Host``,
``Proxy-*`` and hop-by-hop ones. A tunnel's bytes are opaque: what is decided
is where the connection goes, not what it says.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import select
import socket
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hugind.errors import HostCallError
from hugind.policy.audit import redact

if TYPE_CHECKING:
    from hugind.policy.engine import PolicyEngine
    from hugind.policy.net import NetTarget

# The forwarder the child's sandbox runs (``python3 -I forwarder.py ...``); it must not import hugind.
FORWARDER_PATH = Path(__file__).with_name("forwarder.py")

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")

_REASONS = {
    200: "Connection established",
    400: "Bad Request",
    403: "Forbidden",
    408: "Request Timeout",
    431: "Request Header Fields Too Large",
    502: "Bad Gateway",
    503: "Service Unavailable",
}
_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_REQUEST_LINE = re.compile(rf"({_TOKEN}) ([\x21-\x7e]+) (HTTP/1\.[01])")
_HEADER_NAME = re.compile(_TOKEN)
# CONNECT authority: a bracketed IPv6 literal or a DNS-ish name / IPv4 form, and a port. Anything else
# (a path, '@', '%', spaces) is refused before the policy sees it, so the URL it checks is exactly this.
_AUTHORITY = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):([0-9]{1,5})")
# Headers that concern this hop only (RFC 9110 7.6.1) or that the proxy owns.
_MAX_SOCKET_PATH = 107 - 13
_HOP_HEADERS = frozenset({"connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade", "host"})


def proxy_env(port: int) -> dict[str, str]:
    """The environment that sends a confined child's HTTP(S) traffic to the forwarder on ``port``.

    Both spellings, because tools disagree (curl ignores upper-case ``HTTP_PROXY``;
    Python and Go read either). ``NO_PROXY`` is emptied so nothing bypasses the proxy
    (a bypass could only reach the namespace's own empty loopback anyway).
    """
    if not 0 < port < 65536:
        raise ValueError(f"invalid port {port}")
    url = f"http://127.0.0.1:{port}"
    env = dict.fromkeys(PROXY_VARIABLES, url)
    env.update(NO_PROXY="", no_proxy="")
    return env


def forwarder_argv(
    port: int, socket_path: str | Path, argv: list[str], *, python: str = "python3", script: str | Path = FORWARDER_PATH
) -> list[str]:
    """The command line that runs ``argv`` behind the forwarder (paths as the sandbox sees them).

    ``-I -S``: no environment, user site or site-packages (.pth files can cost tens of ms); stdlib only.
    """
    return [python, "-I", "-S", str(script), "--port", str(port), "--unix", str(socket_path), "--", *argv]


@dataclass(frozen=True)
class ProxyLimits:
    max_connections: int = 64  # served at once; more are answered 503 right away
    max_header_bytes: int = 32 * 1024  # request line + headers
    max_header_lines: int = 100
    header_timeout: float = 10.0  # the whole request head must arrive within this (slowloris)
    idle_timeout: float = 120.0  # a connection where no byte moves for this long is closed
    connect_timeout: float | None = None  # None: engine.policy.net.timeout
    max_bytes: int | None = None  # origin -> child bytes per connection; None: not capped (see module doc)
    buffer_bytes: int = 64 * 1024  # per direction and connection
    close_grace: float = 2.0  # how long close() waits for connection threads to finish


@dataclass
class ProxyStats:
    """Counters for tests and reports (updated under the proxy's lock)."""

    accepted: int = 0
    busy: int = 0  # refused with 503: over max_connections
    bad_requests: int = 0  # 400 / 408 / 431
    denied: int = 0  # 403: the policy said no
    upstream_failures: int = 0  # 502
    tunnels: int = 0
    forwarded: int = 0
    upstream_connects: int = 0  # sockets connected to an origin
    bytes_up: int = 0  # child -> origin
    bytes_down: int = 0  # origin -> child


@dataclass(frozen=True)
class ProxyRequest:
    method: str
    target: str  # the authority for CONNECT, the absolute URL otherwise
    version: str
    headers: tuple[tuple[str, str], ...]


class Reply(Exception):
    """Answer the child with this status and one-line message, then close."""

    def __init__(self, status: int, message: str, rule: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.rule = rule

    def response(self) -> bytes:
        body = (" ".join(self.message.split()) + "\n").encode("utf-8", "replace")
        lines = [
            f"HTTP/1.1 {self.status} {_REASONS.get(self.status, 'Error')}",
            "Content-Type: text/plain; charset=utf-8",
            f"Content-Length: {len(body)}",
            "Connection: close",
        ]
        if self.rule:
            lines.append(f"X-Hugind-Rule: {self.rule}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii") + body


class _Stopped(Exception):
    """close() was called: drop the connection without answering."""


def parse_request_head(head: bytes, max_lines: int = 100) -> ProxyRequest:
    """The request line and headers of ``head`` (without the final CRLF CRLF); Reply(400) if malformed."""
    text = head.decode("latin-1")
    lines = text.split("\r\n")
    match = _REQUEST_LINE.fullmatch(lines[0])
    if match is None:
        raise Reply(400, "proxy: malformed request line")
    if len(lines) - 1 > max_lines:
        raise Reply(431, f"proxy: more than {max_lines} header lines")
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        if any(c in line for c in "\r\n\0"):
            raise Reply(400, "proxy: bare CR, LF or NUL in a header")
        name, sep, value = line.partition(":")
        if not sep or not _HEADER_NAME.fullmatch(name):  # also refuses obs-fold (a line starting with space)
            raise Reply(400, "proxy: malformed header line")
        headers.append((name, value.strip(" \t")))
    return ProxyRequest(match[1], match[2], match[3], tuple(headers))


def connect_url(authority: str) -> str:
    """The URL a CONNECT target is checked as: ``https://host:port/``; Reply(400) if it is not host:port."""
    match = _AUTHORITY.fullmatch(authority)
    if match is None or not 0 < int(match[2]) < 65536:
        raise Reply(400, f"proxy: CONNECT needs host:port, got {authority[:200]!r}")
    return f"https://{match[1]}:{int(match[2])}/"


def check_framing(request: ProxyRequest) -> None:
    """Reply(400) for ambiguous body framing, which is how requests get smuggled (an honest client never sends it)."""
    lengths = {value for name, value in request.headers if name.lower() == "content-length"}
    chunked = any(name.lower() == "transfer-encoding" for name, _ in request.headers)
    if len(lengths) > 1 or (lengths and chunked) or any(not v.isdigit() for v in lengths):
        raise Reply(400, "proxy: conflicting or invalid Content-Length / Transfer-Encoding")


def origin_head(request: ProxyRequest, target: NetTarget) -> bytes:
    """The request head sent to the origin: origin-form, Host from the checked URL, no proxy/hop headers."""
    listed = set()  # headers the client's Connection header declares hop-by-hop
    for name, value in request.headers:
        if name.lower() == "connection":
            listed |= {part.strip().lower() for part in value.split(",")}
    lines = [f"{request.method} {target.target} {request.version}", f"Host: {target.host_header}"]
    for name, value in request.headers:
        key = name.lower()
        if key == "transfer-encoding":
            lines.append(f"{name}: {value}")  # the body is relayed as sent, so its framing stays
        elif key in _HOP_HEADERS or key in listed or key.startswith("proxy-"):
            continue
        else:
            lines.append(f"{name}: {value}")
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class ResponseHeads:
    """Says ``Connection: close`` in the origin's response head(s) of a forwarded plain-HTTP request.

    The proxy asked the origin to close; telling the child too stops a keep-alive
    client from sending its next request (maybe for another host) down this
    connection, which is pinned to this origin and would only reach it. 1xx heads
    pass unchanged and the next head is handled; a head over ``limit`` bytes, or
    anything after the final head, passes untouched.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.buf = bytearray()
        self.done = False

    def feed(self, data: bytes) -> bytes:
        if self.done:
            return data
        self.buf += data
        out = bytearray()
        while not self.done:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buf) <= self.limit:
                    return bytes(out)  # wait for the rest of the head
                self.done = True
                break
            head = bytes(self.buf[:end])
            del self.buf[: end + 4]
            out += self.rewrite(head)
        out += self.buf
        self.buf.clear()
        return bytes(out)

    def flush(self) -> bytes:
        """What is held back, as it is (the origin ended mid-head)."""
        self.done = True
        data = bytes(self.buf)
        self.buf.clear()
        return data

    def rewrite(self, head: bytes) -> bytes:
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        code = parts[1] if len(parts) > 1 else b""
        if code.isdigit() and len(code) == 3 and code.startswith(b"1") and code != b"101":
            return head + b"\r\n\r\n"  # 100 Continue and friends: the final head is still to come
        self.done = True
        kept = [lines[0]]
        for line in lines[1:]:
            name = line.split(b":", 1)[0].strip().lower()
            if name not in (b"connection", b"keep-alive", b"proxy-connection"):
                kept.append(line)
        kept.append(b"Connection: close")
        return b"\r\n".join(kept) + b"\r\n\r\n"


@dataclass(eq=False)  # identity semantics: kept in a set
class _Conn:
    client: socket.socket
    upstream: socket.socket | None = None
    thread: threading.Thread | None = field(default=None, repr=False)


class ChildNetProxy:
    """Serve the proxy protocol on ``socket_path`` (mode 0600), deciding every target with ``engine``.

    Use as a context manager, or call ``start()`` / ``close()``. The socket file
    is created fresh (an existing path is an error) and removed by ``close()``.
    """

    def __init__(self, engine: PolicyEngine, socket_path: Path, *, limits: ProxyLimits | None = None) -> None:
        self.engine = engine
        self.socket_path = Path(socket_path)
        self.limits = limits or ProxyLimits()
        self.stats = ProxyStats()
        self._lock = threading.Lock()
        self._conns: set[_Conn] = set()  # guarded by _lock
        self._listener: socket.socket | None = None
        self._inode: tuple[int, int] | None = None
        self._accept_thread: threading.Thread | None = None
        # close() closes the write end: every poll that watches the read end wakes (EOF) and stays woken.
        self._stop_r, self._stop_w = -1, -1
        self._stopping = False

    # --- lifecycle ----------------------------------------------------------------------

    def __enter__(self) -> ChildNetProxy:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        if self._listener is not None:
            raise RuntimeError("proxy already started")
        if len(os.fsencode(self.socket_path)) > _MAX_SOCKET_PATH:
            # AF_UNIX paths are at most 107 bytes, and the socket is first bound 13 bytes deeper (_bind_private).
            raise ValueError(f"socket path longer than {_MAX_SOCKET_PATH} bytes: {self.socket_path}")
        self._listener = self._bind_private(self.socket_path)
        st = os.stat(self.socket_path)
        self._inode = (st.st_dev, st.st_ino)
        self._stop_r, self._stop_w = os.pipe()
        self._accept_thread = threading.Thread(target=self._accept_loop, name="hugind-proxy-accept", daemon=True)
        self._accept_thread.start()

    @staticmethod
    def _bind_private(path: Path) -> socket.socket:
        """Bind, then publish at ``path`` with mode 0600 and no window where others could connect.

        The socket is bound inside a fresh 0700 directory, chmod-ed, then hard-linked
        to ``path`` (which fails instead of replacing an existing file).
        """
        path.parent.mkdir(parents=True, exist_ok=True)
        private = tempfile.mkdtemp(prefix=".p", dir=path.parent)  # short: "/.pXXXXXXXX/s" is 13 more bytes
        temp = os.path.join(private, "s")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(temp)
            os.chmod(temp, 0o600)
            os.link(temp, path)
            sock.listen(128)
        except BaseException:
            sock.close()
            with contextlib.suppress(OSError):
                if os.path.samefile(temp, path):  # linked already: unpublish
                    os.unlink(path)
            raise
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            with contextlib.suppress(OSError):
                os.rmdir(private)
        return sock

    def close(self) -> None:
        """Stop accepting, end every connection, remove the socket file. Returns within ~close_grace."""
        with self._lock:
            if self._stopping or self._listener is None:
                self._stopping = True
                return
            self._stopping = True
            conns = list(self._conns)
        os.close(self._stop_w)
        for conn in conns:
            # Wakes anything not watching the stop pipe; threads still resolving a name see _stopping later.
            for sock in (conn.client, conn.upstream):
                if sock is not None:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + self.limits.close_grace
        threads = [self._accept_thread] + [c.thread for c in conns]
        for thread in threads:
            if thread is not None:
                thread.join(max(0.0, deadline - time.monotonic()))
        self._listener.close()
        with contextlib.suppress(OSError):
            st = os.lstat(self.socket_path)
            if (st.st_dev, st.st_ino) == self._inode:  # only our own socket, never a file someone put there since
                os.unlink(self.socket_path)
        if all(t is None or not t.is_alive() for t in threads):
            os.close(self._stop_r)  # else a straggler may still poll it; the fd goes with the process

    @property
    def active_connections(self) -> int:
        with self._lock:
            return len(self._conns)

    # --- accepting ----------------------------------------------------------------------

    def _accept_loop(self) -> None:
        assert self._listener is not None
        poller = select.poll()
        poller.register(self._listener.fileno(), select.POLLIN)
        poller.register(self._stop_r, select.POLLIN)
        while True:
            for fd, _ in poller.poll():
                if fd == self._stop_r:
                    return
            try:
                client, _ = self._listener.accept()
            except OSError:
                continue
            self._admit(client)

    def _admit(self, client: socket.socket) -> None:
        conn = _Conn(client)
        with self._lock:
            self.stats.accepted += 1
            if self._stopping:
                client.close()
                return
            if len(self._conns) >= self.limits.max_connections:
                self.stats.busy += 1
                busy = True
            else:
                busy = False
                self._conns.add(conn)
        if busy:
            reply = Reply(503, f"proxy: more than {self.limits.max_connections} connections at once")
            self._answer(client, reply)
            client.close()
            return
        conn.thread = threading.Thread(target=self._serve, args=(conn,), name="hugind-proxy-conn", daemon=True)
        conn.thread.start()

    # --- one connection -----------------------------------------------------------------

    def _serve(self, conn: _Conn) -> None:
        try:
            got = self._read_head(conn.client)
            if got is None:
                return
            head, rest = got
            request = parse_request_head(head, self.limits.max_header_lines)
            if request.method == "CONNECT":
                self._tunnel(conn, request, rest)
            else:
                self._forward(conn, request, rest)
        except Reply as reply:
            self._count_reply(reply.status)
            self._answer(conn.client, reply)
        except (_Stopped, OSError):
            pass
        finally:
            with self._lock:
                self._conns.discard(conn)
            for sock in (conn.client, conn.upstream):
                if sock is not None:
                    sock.close()

    def _count_reply(self, status: int) -> None:
        with self._lock:
            if status == 403:
                self.stats.denied += 1
            elif status == 502:
                self.stats.upstream_failures += 1
            else:
                self.stats.bad_requests += 1

    @staticmethod
    def _answer(sock: socket.socket, reply: Reply) -> None:
        """Best effort, never blocking: the child may be gone or not reading."""
        with contextlib.suppress(OSError):
            sock.setblocking(False)
            sock.send(reply.response())
            sock.shutdown(socket.SHUT_WR)

    def _wait(self, sock: socket.socket, events: int, deadline: float) -> bool:
        """Wait until ``sock`` has ``events``; False at the deadline; _Stopped on close()."""
        poller = select.poll()
        poller.register(sock.fileno(), events)
        poller.register(self._stop_r, select.POLLIN)
        left = deadline - time.monotonic()
        while left > 0:
            ready = poller.poll(left * 1000)
            if any(fd == self._stop_r for fd, _ in ready):
                raise _Stopped
            if ready:
                return True
            left = deadline - time.monotonic()
        return False

    def _read_head(self, client: socket.socket) -> tuple[bytes, bytes] | None:
        """The request head and whatever followed it; None if the child hung up first."""
        client.setblocking(False)
        limit = self.limits.max_header_bytes
        deadline = time.monotonic() + self.limits.header_timeout
        buf = bytearray()
        while True:
            if not self._wait(client, select.POLLIN, deadline):
                raise Reply(408, f"proxy: request head not received within {self.limits.header_timeout:g}s")
            try:
                data = client.recv(4096)
            except BlockingIOError:
                continue
            if not data:
                return None
            start = max(0, len(buf) - 3)
            buf += data
            end = buf.find(b"\r\n\r\n", start)
            if end >= 0 and end <= limit:
                return bytes(buf[:end]), bytes(buf[end + 4 :])
            if len(buf) > limit:
                raise Reply(431, f"proxy: request head larger than {limit} bytes")

    def _check(self, url: str) -> NetTarget:
        """The one policy decision (audited by the engine); Reply(403) naming the rule if refused."""
        try:
            return self.engine.check_connect(url)
        except HostCallError as exc:
            rule = self._rule_of(exc, url)
            raise Reply(403, f"denied by {rule}: {exc.message}", rule) from None

    def _rule_of(self, exc: HostCallError, url: str) -> str:
        """The rule that refused ``url``: from the error if it carries one, else from the engine's audit entry."""
        rule = getattr(exc, "rule", None)
        if isinstance(rule, str):
            return rule
        wanted = redact(url)
        for entry in reversed(list(self.engine.audit.entries)):
            request = entry.get("request") or {}
            mine = entry.get("capability") == "network" and request.get("url") == wanted
            if mine and entry.get("decision") == "deny":
                return str(entry.get("rule"))
        return "network"

    def _connect(self, target: NetTarget) -> socket.socket:
        """A socket connected to one of the checked addresses (in order), within the connect timeout."""
        timeout = self.limits.connect_timeout
        deadline = time.monotonic() + (self.engine.policy.net.timeout if timeout is None else timeout)
        reason = "no address"
        for address in target.addresses:
            family = socket.AF_INET6 if ":" in address else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                sock.setblocking(False)
                code = sock.connect_ex((address, target.port))
                if code == errno.EINPROGRESS:
                    if not self._wait(sock, select.POLLOUT, deadline):
                        raise TimeoutError("timed out")
                    code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if code:
                    raise OSError(code, os.strerror(code))
            except OSError as exc:
                sock.close()
                reason = f"{address}: {exc.strerror or exc}"
                if time.monotonic() >= deadline:
                    break
                continue
            except BaseException:
                sock.close()
                raise
            with self._lock:
                self.stats.upstream_connects += 1
            return sock
        raise Reply(502, f"proxy: cannot connect to {target.host} port {target.port} ({reason})")

    def _open(self, conn: _Conn, url: str) -> NetTarget:
        target = self._check(url)
        if self._stopping:
            raise _Stopped
        conn.upstream = self._connect(target)
        if self._stopping:  # close() may have run while connecting and missed this socket
            raise _Stopped
        return target

    def _tunnel(self, conn: _Conn, request: ProxyRequest, rest: bytes) -> None:
        self._open(conn, connect_url(request.target))
        with self._lock:
            self.stats.tunnels += 1
        assert conn.upstream is not None
        self._pump(conn.client, conn.upstream, b"HTTP/1.1 200 Connection established\r\n\r\n", rest)

    def _forward(self, conn: _Conn, request: ProxyRequest, rest: bytes) -> None:
        if not request.target.lower().startswith("http://"):
            hint = "use CONNECT for https" if request.target.lower().startswith("https://") else "need http://..."
            raise Reply(400, f"proxy: the request target must be an absolute http:// URL ({hint})")
        check_framing(request)  # before the policy: a malformed request is not a decision to audit
        target = self._open(conn, request.target)
        head = origin_head(request, target)
        with self._lock:
            self.stats.forwarded += 1
        assert conn.upstream is not None
        self._pump(conn.client, conn.upstream, b"", head + rest, ResponseHeads(self.limits.max_header_bytes))

    def _pump(
        self,
        client: socket.socket,
        upstream: socket.socket,
        to_client: bytes,
        to_upstream: bytes,
        heads: ResponseHeads | None = None,
    ) -> None:
        """Relay both ways through bounded buffers until both sides are done, the idle timeout or close().

        A side that ends (EOF) has its data flushed to the other, whose write side is
        then shut (half-close), so request/response protocols finish cleanly. ``heads``
        filters what goes to the client (plain HTTP only).
        """
        limits = self.limits
        peer = {client: upstream, upstream: client}
        pending = {client: bytearray(to_client), upstream: bytearray(to_upstream)}  # bytes waiting to go TO it
        eof = {client: False, upstream: False}  # this side sent EOF
        shut = {client: False, upstream: False}  # we shut this side's write
        by_fd = {client.fileno(): client, upstream.fileno(): upstream}
        down = 0
        with self._lock:
            self.stats.bytes_up += len(to_upstream)  # the request head (plain HTTP) and what followed it
        for sock in by_fd.values():
            sock.setblocking(False)
        poller = select.poll()
        poller.register(self._stop_r, select.POLLIN)
        registered: set[int] = set()
        last = time.monotonic()
        while True:
            for sock in by_fd.values():
                if eof[peer[sock]] and not pending[sock] and not shut[sock]:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_WR)
                    shut[sock] = True
            if all(shut.values()):
                return
            for fd, sock in by_fd.items():
                mask = 0
                if not eof[sock] and len(pending[peer[sock]]) < limits.buffer_bytes:
                    mask |= select.POLLIN
                if pending[sock]:
                    mask |= select.POLLOUT
                if mask:
                    poller.register(fd, mask)  # re-registering replaces the mask
                    registered.add(fd)
                elif fd in registered:
                    poller.unregister(fd)
                    registered.discard(fd)
            left = last + limits.idle_timeout - time.monotonic()
            if left <= 0 or not registered:
                return
            for fd, ev in poller.poll(left * 1000):
                if fd == self._stop_r:
                    raise _Stopped
                sock = by_fd[fd]
                if ev & select.POLLNVAL:
                    return
                if ev & select.POLLOUT and pending[sock]:
                    try:
                        sent = sock.send(pending[sock])
                    except BlockingIOError:
                        sent = 0
                    except OSError:
                        return
                    del pending[sock][:sent]
                    last = time.monotonic()
                if ev & (select.POLLIN | select.POLLHUP | select.POLLERR) and not eof[sock]:
                    try:
                        data = sock.recv(limits.buffer_bytes)
                    except BlockingIOError:
                        continue
                    except OSError:
                        return
                    if not data:
                        eof[sock] = True
                        if sock is upstream and heads is not None:
                            pending[client] += heads.flush()
                        continue
                    pending[peer[sock]] += heads.feed(data) if heads is not None and sock is upstream else data
                    last = time.monotonic()
                    with self._lock:
                        if sock is upstream:
                            self.stats.bytes_down += len(data)
                        else:
                            self.stats.bytes_up += len(data)
                    if sock is upstream:
                        down += len(data)
                        if limits.max_bytes is not None and down > limits.max_bytes:
                            return  # cut: the child sees the connection end early
                elif ev & (select.POLLERR | select.POLLHUP) and not ev & select.POLLOUT:
                    return  # an error on a side we are not reading
