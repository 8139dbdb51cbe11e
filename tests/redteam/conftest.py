"""Fixtures for the red-team suite: agent folders, loopback servers, a network guard.

Nothing here may reach a non-loopback address. ``_network_guard`` (autouse)
enforces it for everything that runs in this process: a connect to anything
but loopback, or a DNS lookup of a real name, fails the test instead of
leaving the machine. Attack URLs aimed at private or metadata addresses must
be denied by the policy before any connection; the guard proves it.
"""

from __future__ import annotations

import ipaddress
import itertools
import json
import socket
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from tests.redteam.helpers import NetViolation, Outcome, run_attack
from tests.support.http_server import (
    RecordingServer,
    big_route,
    chain_route,
    chunked_route,
    gzip_bomb_route,
    reply,
)

# --- the network guard -------------------------------------------------------------


def _loopback(host: Any) -> bool:
    try:
        addr = ipaddress.ip_address(str(host).split("%")[0])
    except ValueError:
        return False
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    return addr.is_loopback


@pytest.fixture(autouse=True)
def _network_guard(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    violations: list[str] = []
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address[0]):
            violations.append(f"connect to {address!r}")
            raise NetViolation(f"red-team guard: refused to connect to non-loopback {address!r}")

    def connect(self: socket.socket, address: Any) -> None:
        check(self, address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        check(self, address)
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name is None or name == "localhost" or _is_literal(name):
            return real_getaddrinfo(host, *args, **kwargs)
        if str(name).rstrip(".").endswith((".invalid", ".test")):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        violations.append(f"DNS lookup of {name!r}")
        raise socket.gaierror(socket.EAI_NONAME, "red-team guard: no real DNS lookups")

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield violations
    assert not violations, f"the test tried to leave loopback: {violations}"


def _is_literal(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@pytest.fixture
def fake_dns(monkeypatch: pytest.MonkeyPatch) -> Callable[[dict[str, list[str]]], list[str]]:
    """Replace hugind's resolver by a table; returns the list of names looked up."""
    calls: list[str] = []

    def install(table: dict[str, list[str]]) -> list[str]:
        def resolver(host: str, port: int, timeout: float) -> list[str]:
            calls.append(host)
            answers = table.get(host)
            if answers is None:
                raise OSError(f"fake DNS: no such name {host}")
            # A list of lists plays successive answers (DNS rebinding); else always the same.
            if answers and isinstance(answers[0], list):
                return answers[min(calls.count(host), len(answers)) - 1]
            return answers

        monkeypatch.setattr("hugind.policy.engine.system_resolver", resolver)
        return calls

    return install


# --- agents --------------------------------------------------------------------------


@pytest.fixture
def agent_dir(tmp_path: Path) -> Callable[[], Path]:
    """Fresh agent roots under one tmp dir (siblings of ``outside``)."""
    counter = itertools.count()

    def make() -> Path:
        root = tmp_path / f"agent{next(counter)}"
        root.mkdir()
        return root

    return make


@pytest.fixture
def attack(agent_dir: Callable[[], Path]) -> Callable[..., Outcome]:
    """``attack(body, permissions, **kw)``: run one attack agent in a fresh root."""

    def run(body: str | None = None, permissions: dict | None = None, *, root: Path | None = None, **kw):
        return run_attack(root or agent_dir(), body, permissions, **kw)

    return run


# --- loopback HTTP servers -------------------------------------------------------------


class Server(RecordingServer):
    """The shared recording server, with the routes the attacks aim at."""

    def __init__(self) -> None:
        super().__init__()
        self._standard_routes()

    def _standard_routes(self) -> None:
        def hello(h: BaseHTTPRequestHandler) -> None:
            reply(h, 200, b"hello from loopback", {"Content-Type": "text/plain"})

        def echo(h: BaseHTTPRequestHandler) -> None:
            last = self.requests[-1]
            data = {
                "headers": {k.lower(): v for k, v in last["headers"].items()},
                "body": last["body"].decode(),
            }
            reply(h, 200, json.dumps(data).encode(), {"Content-Type": "application/json"})

        def redirect(h: BaseHTTPRequestHandler) -> None:
            target = self.redirect_to.get(h.path.split("?")[0].removeprefix("/redirect/"), "/hello")
            reply(h, 302, b"", {"Location": target})

        self.redirect_to: dict[str, str] = {}
        self.routes.update(
            {
                "/hello": hello,
                "/echo": echo,
                "/chain": chain_route,
                "/big": big_route,
                "/nolength": chunked_route,
                "/bomb": gzip_bomb_route(20),
            }
        )
        self.routes.update({f"/redirect/{i}": redirect for i in range(8)})


@pytest.fixture
def server() -> Iterator[Server]:
    srv = Server()
    yield srv
    srv.close()


@pytest.fixture
def server2() -> Iterator[Server]:
    srv = Server()
    yield srv
    srv.close()
