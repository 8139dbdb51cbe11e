"""A backend URL an agent chose is connected to at the addresses its network policy
checked, never resolved again (DNS rebinding around ``block_private_networks``, #26).

Everything stays on loopback: ``socket.getaddrinfo`` plays a rebinding DNS server
(the name answers 127.0.0.1 the first time, 10.0.0.1 after) without any query, and
``socket.socket.connect`` refuses, before any packet, every address that is not
loopback, recording what was tried.
"""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

import pytest

from hugind.backends import LlmService, choose_backend
from hugind.llm.config import BackendConfig
from hugind.llm.endpoint import Pin
from hugind.llm.errors import BackendUnreachableError
from hugind.manifest import parse_manifest
from hugind.policy import PolicyEngine, build_policy
from tests.support.chat_server import ChatServer, Reply

NAME = "llm.rebind.test"
MESSAGES = [{"role": "user", "content": "hi"}]


class Rebinding:
    def __init__(self) -> None:
        self.lookups: list[str] = []
        self.connects: list[str] = []


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> Rebinding:
    seen = Rebinding()
    real_getaddrinfo, real_connect = socket.getaddrinfo, socket.socket.connect

    def getaddrinfo(host, port, *args, **kwargs):
        if host == NAME:
            seen.lookups.append(host)
            answer = "127.0.0.1" if len(seen.lookups) == 1 else "10.0.0.1"
            return real_getaddrinfo(answer, port, *args, **kwargs)  # numeric: no query
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise socket.gaierror(f"test: no lookup of {host!r} may leave the machine") from None
        return real_getaddrinfo(host, port, *args, **kwargs)

    def connect(sock, address):
        seen.connects.append(address[0])
        if not ipaddress.ip_address(address[0]).is_loopback:
            raise ConnectionRefusedError(f"test guard: {address[0]} is not loopback (never contacted)")
        return real_connect(sock, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    return seen


@pytest.fixture
def chat():
    with ChatServer(default=Reply("pinned answer")) as server:
        yield server


def _engine(tmp_path: Path, port: int) -> PolicyEngine:
    network = {"allow": True, "allowed_domains": [f"{NAME}:{port}"], "allowed_ips": [f"127.0.0.1:{port}"]}
    return PolicyEngine(build_policy({"network": network}, runtime_fs_mode=None, agent_root=tmp_path))


def _manifest(backend):
    return parse_manifest({"name": "a", "entry_point": "main.js", "backend": backend})


def test_an_agents_backend_url_is_connected_at_the_checked_address(tmp_path, dns, chat):
    url = f"http://{NAME}:{chat.port}/v1"
    engine = _engine(tmp_path, chat.port)
    config = choose_backend(_manifest({"url": url, "max_retries": 0}), None, engine)
    assert config.pin == Pin("http", NAME, chat.port, ("127.0.0.1",))
    client = config.make_client()
    try:
        assert client.complete(MESSAGES).content == "pinned answer"
    finally:
        client.close()
    assert dns.lookups == [NAME]  # the policy's one lookup; the client made none
    assert dns.connects == ["127.0.0.1"]  # the second answer (10.0.0.1) was never tried
    assert chat.requests[0].headers["host"] == f"{NAME}:{chat.port}"  # the name, not the address


def test_without_the_pin_the_second_answer_would_be_used(tmp_path, dns, chat):
    """The road the pin closes: the same URL, resolved again by httpx, goes to 10.0.0.1
    (refused here by the connect guard, before any packet)."""
    engine = _engine(tmp_path, chat.port)
    engine.check_connect(f"http://{NAME}:{chat.port}/v1")
    unpinned = BackendConfig(url=f"http://{NAME}:{chat.port}/v1", max_retries=0).make_client()
    try:
        with pytest.raises(BackendUnreachableError):
            unpinned.complete(MESSAGES)
    finally:
        unpinned.close()
    assert dns.lookups == [NAME, NAME] and dns.connects == ["10.0.0.1"]
    assert chat.requests == []


def test_a_pinned_client_refuses_any_other_origin(dns, chat):
    pin = Pin("http", NAME, chat.port, ("127.0.0.1",))
    other = BackendConfig(url=f"http://other.test:{chat.port}/v1", max_retries=0, pin=pin).make_client()
    try:
        with pytest.raises(BackendUnreachableError, match="not the address the network policy checked"):
            other.complete(MESSAGES)
    finally:
        other.close()
    assert dns.lookups == [] and dns.connects == [] and chat.requests == []


def test_an_agents_fallback_is_pinned_when_admitted(tmp_path, dns, chat):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead_port = closed.getsockname()[1]
    closed.close()  # nothing listens there: the primary fails and the chain moves on
    fallback = BackendConfig(url=f"http://{NAME}:{chat.port}/v1", max_retries=0, from_agent=True)
    primary = BackendConfig(url=f"http://127.0.0.1:{dead_port}/v1", max_retries=0, fallbacks=(fallback,))
    service = LlmService(connect=lambda: primary, policy=_engine(tmp_path, chat.port))
    client = service.client()
    try:
        assert client.complete(MESSAGES).content == "pinned answer"
    finally:
        client.close()
    assert dns.lookups == [NAME]
    assert dns.connects == ["127.0.0.1", "127.0.0.1"]  # the dead primary, then the pinned fallback
    assert chat.requests[0].headers["host"] == f"{NAME}:{chat.port}"
