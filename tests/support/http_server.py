"""A plain HTTP server on 127.0.0.1 with scripted routes that records every request.

Shared by the policy tests and the red-team suite: both need to prove what a
server did (or did not) receive.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Route = Callable[[BaseHTTPRequestHandler], None]


class QuietServer(ThreadingHTTPServer):
    """A threading server that does not print a traceback when a client hangs up."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients leaving early (a body cap reached, a reset, a closed keep-alive
        # socket) are what several tests do on purpose.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


def reply(handler: BaseHTTPRequestHandler, status: int, body: bytes = b"", headers: dict | None = None) -> None:
    handler.send_response(status)
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    if "Content-Length" not in (headers or {}) and "Transfer-Encoding" not in (headers or {}):
        handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    if body and handler.command != "HEAD":
        handler.wfile.write(body)


class RecordingServer:
    """Routes by path (query ignored); unknown paths get 404."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                server.requests.append(
                    {"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body}
                )
                route = server.routes.get(self.path.split("?")[0])
                if route is None:
                    reply(self, 404, b"no route")
                else:
                    route(self)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = _any

        self.httpd = QuietServer(("127.0.0.1", 0), Handler)
        self.port: int = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def paths(self) -> list[str]:
        return [r["path"] for r in self.requests]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# --- routes both the policy and red-team suites aim at ----------------------------------


def chain_route(handler: BaseHTTPRequestHandler) -> None:
    """``/chain?n=N``: N more redirects, then a 200."""
    n = int(handler.path.split("?n=")[1])
    if n == 0:
        reply(handler, 200, b"end of chain")
    else:
        reply(handler, 302, b"", {"Location": f"/chain?n={n - 1}"})


def big_route(handler: BaseHTTPRequestHandler) -> None:
    """300 kB with a Content-Length."""
    reply(handler, 200, b"x" * 300_000)


def chunked_route(handler: BaseHTTPRequestHandler) -> None:
    """1 MB in chunks, no Content-Length: only a streaming cap stops it."""
    handler.send_response(200)
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    piece = b"y" * 10_000
    with contextlib.suppress(OSError):
        for _ in range(100):
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        handler.wfile.write(b"0\r\n\r\n")


@functools.cache
def gzip_bomb(mib: int) -> bytes:
    """``mib`` MiB of zeros, gzip-compressed to about ``mib`` KiB."""
    return gzip.compress(b"\0" * (mib * 1024 * 1024), compresslevel=9)


def gzip_bomb_route(mib: int) -> Route:
    def bomb(handler: BaseHTTPRequestHandler) -> None:
        with contextlib.suppress(OSError):
            reply(handler, 200, gzip_bomb(mib), {"Content-Encoding": "gzip"})

    return bomb
