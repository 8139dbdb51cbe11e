"""Fixtures for the policy engine and the fs/shell/net capabilities.

Everything is real: files in tmp dirs, subprocesses, HTTP servers bound to
127.0.0.1. Nothing here reaches any other address.
"""

from __future__ import annotations

import gzip
import json
import shutil
import ssl
import subprocess
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from hugind.errors import HostCallError
from hugind.host import fs, net, shell
from hugind.host.registry import HostContext
from hugind.policy import AuditLog, PolicyEngine, build_policy
from tests.support.dns import hosts_file_resolver
from tests.support.http_server import (
    RecordingServer,
    big_route,
    chain_route,
    chunked_route,
    gzip_bomb_route,
    reply,
)

OPS = {op.name: op for op in (*fs.OPS, *shell.OPS, *net.OPS)}


class Harness:
    """An engine + host context over one agent root, with helpers to call ops."""

    def __init__(self, root: Path, engine: PolicyEngine, deadline: float = float("inf")) -> None:
        self.root = root
        self.engine = engine
        self.ctx = HostContext(policy=engine, agent_root=root, deadline=deadline)

    @property
    def audit(self) -> list[dict[str, Any]]:
        return list(self.engine.audit.entries)

    def call(self, name: str, **args: Any) -> Any:
        return OPS[name].handler(self.ctx, args)

    def fails(self, name: str, **args: Any) -> HostCallError:
        try:
            value = self.call(name, **args)
        except HostCallError as exc:
            return exc
        raise AssertionError(f"{name}({args}) was allowed and returned {value!r}")


@pytest.fixture
def agent_root(tmp_path: Path) -> Path:
    root = tmp_path / "agent"
    root.mkdir()
    return root


@pytest.fixture
def harness(agent_root: Path) -> Iterator[Callable[..., Harness]]:
    engines: list[PolicyEngine] = []

    def make(
        permissions: dict | None = None,
        *,
        mode: str | None = None,
        strict: bool = False,
        preset: dict | None = None,
        audit: AuditLog | None = None,
        resolver: Any = None,
        deadline: float = float("inf"),
    ) -> Harness:
        policy = build_policy(permissions, runtime_fs_mode=mode, agent_root=agent_root, strict=strict, preset=preset)
        engine = PolicyEngine(policy, audit, resolver=resolver or hosts_file_resolver)
        engines.append(engine)
        return Harness(agent_root, engine, deadline)

    yield make
    for engine in engines:
        engine.close()


# --- a loopback HTTP server with scripted routes (tests/support/http_server.py) -----

Server = RecordingServer


def standard_routes(server: Server) -> None:
    """Routes most network tests use."""

    def hello(h: BaseHTTPRequestHandler) -> None:
        reply(h, 200, b"hello", {"Content-Type": "text/plain", "X-Test": "1"})

    def echo(h: BaseHTTPRequestHandler) -> None:
        last = server.requests[-1]
        data = {"method": last["method"], "headers": last["headers"], "body": last["body"].decode()}
        reply(h, 200, json.dumps(data).encode(), {"Content-Type": "application/json"})

    def redirect(h: BaseHTTPRequestHandler) -> None:
        query = h.path.split("?", 1)[1] if "?" in h.path else ""
        params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
        status = int(params.get("status", "302"))
        reply(h, status, b"", {"Location": unquote(params["to"])})

    def gzipped(h: BaseHTTPRequestHandler) -> None:
        reply(h, 200, gzip.compress("héllo gzip".encode()), {"Content-Encoding": "gzip"})

    def slow(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "1000")
        h.end_headers()
        try:
            for _ in range(1000):
                h.wfile.write(b"z")
                h.wfile.flush()
                time.sleep(0.05)
        except OSError:
            pass

    server.routes.update(
        {
            "/hello": hello,
            "/echo": echo,
            "/redirect": redirect,
            "/chain": chain_route,
            "/big": big_route,
            "/chunked": chunked_route,
            "/gzip": gzipped,
            "/bomb": gzip_bomb_route(50),
            "/slow": slow,
        }
    )


@pytest.fixture
def http_server() -> Iterator[Server]:
    server = Server()
    standard_routes(server)
    yield server
    server.close()


@pytest.fixture
def other_server() -> Iterator[Server]:
    server = Server()
    standard_routes(server)
    yield server
    server.close()


class TlsServer(Server):
    """An HTTPS server on 127.0.0.1 with a self-signed certificate for ``svc.test``."""

    def __init__(self, workdir: Path) -> None:
        super().__init__()
        key, cert = workdir / "key.pem", workdir / "cert.pem"
        command = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=svc.test"
        command += " -addext subjectAltName=DNS:svc.test"
        subprocess.run(
            [*command.split(), "-keyout", str(key), "-out", str(cert)],
            check=True,
            capture_output=True,
            timeout=60,
        )
        self.sni: list[str | None] = []
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        context.sni_callback = lambda sock, name, ctx: self.sni.append(name)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[TlsServer]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    server = TlsServer(tmp_path)
    standard_routes(server)
    yield server
    server.close()
