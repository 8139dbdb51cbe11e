"""The proxy's decide step on its own: which URL a target stands for, and the engine's verdict on it.

No socket and no DNS query here: addresses outside loopback (public IPv6,
IPv4-mapped private ones) are decided and never connected to. The resolver
raises if it is asked anything.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from hugind.confine.proxy import ChildNetProxy
from hugind.confine.proxy.base import Reply
from hugind.confine.proxy.decide import connect_url, decide, forward_url
from hugind.policy import PolicyEngine
from tests.confine.proxy_helpers import ask, make_engine, refusing_resolver, short_socket_path


def network_audit(engine: PolicyEngine) -> list[dict]:
    return [e for e in engine.audit.entries if e["capability"] == "network"]


def refused(engine: PolicyEngine, authority: str) -> Reply:
    with pytest.raises(Reply) as caught:
        decide(engine, connect_url(authority))
    return caught.value


# --- IPv6 literals go through allowed_ips like any address --------------------------------------


@pytest.mark.parametrize("block_private", [True, False])
@pytest.mark.parametrize(
    ("authority", "address", "private"),
    [
        ("[2606:4700::1111]:443", "2606:4700::1111", False),
        ("[::ffff:10.0.0.1]:443", "::ffff:a00:1", True),
        ("[::ffff:8.8.8.8]:443", "::ffff:808:808", False),  # a mapped public address: still not 127.0.0.1
        ("[64:ff9b::a00:1]:443", "64:ff9b::a00:1", True),  # NAT64 form of 10.0.0.1
    ],
)
def test_ipv6_literal_outside_allowed_ips_is_denied(
    tmp_path: Path, authority: str, address: str, private: bool, block_private: bool
) -> None:
    calls: list[str] = []
    network = {"allowed_ips": ["127.0.0.1"], "block_private_networks": block_private}
    engine = make_engine(tmp_path, network, refusing_resolver(calls))
    reply = refused(engine, authority)
    rule = "network.block_private_networks" if private and block_private else "network.allowed_ips"
    assert reply.status == 403 and reply.rule == rule, reply.message
    [entry] = network_audit(engine)
    assert entry["decision"] == "deny" and entry["rule"] == rule
    assert entry["request"]["url"] == f"https://{authority}/"
    assert calls == [] and engine.denials == 1
    if rule == "network.allowed_ips":
        assert f"address {address} port 443 is not in allowed_ips" in reply.message


@pytest.mark.parametrize("block_private", [True, False])
def test_the_proxy_asks_the_decide_step_for_ipv6_literals_too(tmp_path: Path, block_private: bool) -> None:
    # The same question through the whole proxy, on an address that is safe to reach if it were allowed:
    # a listener on [::1] that allowed_ips does not name must never see a connection.
    try:
        listener = socket.socket(socket.AF_INET6)
        listener.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    listener.listen(1)
    port = listener.getsockname()[1]
    network = {"allowed_ips": ["127.0.0.1"], "block_private_networks": block_private}
    engine = make_engine(tmp_path, network, refusing_resolver([]))
    with listener, short_socket_path() as path, ChildNetProxy(engine, path) as proxy:
        response = ask(path, f"CONNECT [::1]:{port} HTTP/1.1\r\nHost: [::1]:{port}\r\n\r\n".encode())
        assert proxy.stats.upstream_connects == 0
    rule = "network.block_private_networks" if block_private else "network.allowed_ips"
    assert response.status == 403 and response.headers["x-hugind-rule"] == rule
    assert [e["decision"] for e in network_audit(engine)] == ["deny"]


def test_ipv6_literal_named_in_allowed_ips_is_pinned_to_itself(tmp_path: Path) -> None:
    calls: list[str] = []
    engine = make_engine(tmp_path, {"allowed_ips": ["[::1]:8443", "127.0.0.1"]}, refusing_resolver(calls))
    target = decide(engine, connect_url("[::1]:8443"))
    assert (target.host, target.port, target.addresses, target.is_ip) == ("::1", 8443, ("::1",), True)
    assert refused(engine, "[::1]:8444").rule == "network.allowed_ips"  # that entry names one port
    assert [e["decision"] for e in network_audit(engine)] == ["allow", "deny"] and calls == []


def test_names_are_resolved_before_the_address_is_checked(tmp_path: Path) -> None:
    # allowed by name, refused by what the name resolves to: the lookup is the engine's, once.
    calls: list[str] = []

    def resolver(host: str, port: int, timeout: float) -> list[str]:
        calls.append(host)
        return ["::ffff:169.254.169.254"]

    engine = make_engine(tmp_path, {"allowed_domains": ["meta.test"]}, resolver)
    reply = refused(engine, "meta.test:80")
    assert reply.rule == "network.block_private_networks"
    assert "resolves to ::ffff:a9fe:a9fe" in reply.message and calls == ["meta.test"]


# --- the URL handed to the engine is exactly what the child named -------------------------------


@pytest.mark.parametrize(
    ("authority", "url"),
    [
        ("127.0.0.1:443", "https://127.0.0.1:443/"),
        ("example.test:8080", "https://example.test:8080/"),
        ("[::1]:443", "https://[::1]:443/"),
        ("[::ffff:10.0.0.1]:22", "https://[::ffff:10.0.0.1]:22/"),
        ("127.0.0.1:0443", "https://127.0.0.1:443/"),
        ("2130706433:80", "https://2130706433:80/"),
    ],
)
def test_connect_url(authority: str, url: str) -> None:
    assert connect_url(authority) == url


@pytest.mark.parametrize(
    "authority",
    [
        "127.0.0.1",
        "127.0.0.1:",
        "127.0.0.1:0",
        "127.0.0.1:65536",
        "127.0.0.1:+443",
        "127.0.0.1:443?",
        "127.0.0.1:443#x",
        "evil.test/x.allowed.test:443",
        "user@127.0.0.1:443",
        "[fe80::1%25eth0]:443",
        "[::1]x:443",
        "[]:443",
        "::1:443",
        "ex!ample.test:443",
        ":443",
    ],
)
def test_connect_url_refuses_anything_but_host_port(authority: str) -> None:
    with pytest.raises(Reply) as caught:
        connect_url(authority)
    assert caught.value.status == 400 and "CONNECT needs host:port" in caught.value.message


def test_forward_url_takes_absolute_http_only() -> None:
    assert forward_url("http://a.test/x?y") == "http://a.test/x?y"
    for target, hint in (("https://a.test/", "use CONNECT"), ("/x", "need http://"), ("ftp://a.test/", "need http")):
        with pytest.raises(Reply) as caught:
            forward_url(target)
        assert caught.value.status == 400 and hint in caught.value.message
