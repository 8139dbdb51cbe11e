"""Fixtures for the red-team suite: agent folders, loopback servers, a network guard.

Nothing here may reach a non-loopback address. ``_network_guard`` (autouse)
enforces it for everything that runs in this process: a connect to anything
but loopback, or a DNS lookup of a real name, fails the test instead of
leaving the machine. Attack URLs aimed at private or metadata addresses must
be denied by the policy before any connection; the guard proves it.
"""

from __future__ import annotations

import itertools
import json
import socket
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from tests.redteam.helpers import Outcome, make_guard, run_attack
from tests.support.http_server import (
    RecordingServer,
    big_route,
    chain_route,
    chunked_route,
    gzip_bomb_route,
    reply,
)

# --- the network guard -------------------------------------------------------------


@pytest.fixture(autouse=True)
def _network_guard(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    guard = make_guard(socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", guard.connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guard.connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", guard.getaddrinfo)
    yield guard.violations
    assert not guard.violations, f"the test tried to leave loopback: {guard.violations}"


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
