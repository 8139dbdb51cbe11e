"""Network attacks by real JS agents against loopback test servers.

Every server here listens on 127.0.0.1 only. Addresses the policy must
block (loopback in disguise, private ranges, the metadata IP) are denied
before any connection: the servers see no request, and the autouse network
guard of conftest.py fails any test whose process tries to connect to a
non-loopback address or to look up a real name.
"""

from __future__ import annotations

import json

import pytest

from tests.policy.policy_vectors import NET_BAD_URLS, NET_BLOCKED, NET_POLICY
from tests.redteam.helpers import assert_denied, js


def only(server, port_policy: dict | None = None, **net) -> dict:
    """Network policy that names exactly this loopback server (host and port)."""
    return {"network": {"allow": True, "allowed_ips": [f"127.0.0.1:{server.port}"], "timeout": 10, **net}}


def get(url: str, headers: dict | None = None) -> str:
    return f"return await http_get({js(url)}, {js(headers or {})});"


# --- the block list, replayed through the engine (29 agents) ------------------------------


@pytest.mark.parametrize(("url", "rule", "fragment"), NET_BLOCKED, ids=[v[0] for v in NET_BLOCKED])
def test_blocked_address_forms_are_denied_before_connecting(attack, url, rule, fragment):
    out = attack(get(url), NET_POLICY)
    assert_denied(out, rule, fragment, capability="network")


@pytest.mark.parametrize(("url", "fragment"), NET_BAD_URLS, ids=[v[0] for v in NET_BAD_URLS])
def test_bad_urls_and_schemes_are_refused(attack, url, fragment):
    out = attack(get(url), NET_POLICY)
    assert_denied(out, "network.url", fragment, capability="network")


# --- loopback in disguise, aimed at a live server ---------------------------------------------


@pytest.mark.parametrize(
    ("host", "rule", "fragment"),
    [
        ("127.0.0.1", "network.block_private_networks", "127.0.0.0/8 (loopback)"),
        ("localhost", "network.block_private_networks", "host localhost resolves to 127.0.0.1"),
        ("0.0.0.0", "network.blocked-range", "0.0.0.0/8"),
        ("[::1]", "network.block_private_networks", "::1/128 (loopback)"),
        ("2130706433", "network.block_private_networks", "host 127.0.0.1 is in blocked range"),
        ("0x7f000001", "network.block_private_networks", "host 127.0.0.1 is in blocked range"),
        ("0177.0.0.1", "network.block_private_networks", "host 127.0.0.1 is in blocked range"),
        ("127.1", "network.block_private_networks", "host 127.0.0.1 is in blocked range"),
        ("127.000.000.001", "network.block_private_networks", "host 127.0.0.1"),
        ("[::ffff:127.0.0.1]", "network.block_private_networks", "via IPv4-mapped 127.0.0.1"),
        ("[0:0:0:0:0:ffff:7f00:1]", "network.block_private_networks", "via IPv4-mapped 127.0.0.1"),
        ("LOCALHOST.", "network.block_private_networks", "host localhost resolves to"),
    ],
)
def test_loopback_server_is_unreachable_under_the_default_block(attack, server, host, rule, fragment):
    out = attack(get(f"http://{host}:{server.port}/hello"), NET_POLICY)
    assert_denied(out, rule, fragment)
    assert server.requests == []
    assert "hello from loopback" not in json.dumps(out.value)


def test_metadata_ip_is_denied_even_when_private_networks_are_allowed(attack):
    """169.254.169.254 with block_private_networks: false is still only reachable by naming it."""
    out = attack(
        get("http://169.254.169.254/latest/meta-data/iam/"),
        {"network": {"allow": True, "allowed_domains": ["svc.test"], "block_private_networks": False}},
    )
    assert_denied(out, "network.allowed_ips", "address 169.254.169.254 port 80 is not in allowed_ips")


def test_named_loopback_port_does_not_open_other_ports(attack, server, server2):
    out = attack(get(server2.url("/hello")), only(server))
    assert_denied(out, "network.allowed_ips", f"address 127.0.0.1 port {server2.port} is not in allowed_ips")
    assert server2.requests == []
    out = attack(get(server.url("/hello")), only(server))
    assert out.value == {"ok": True, "value": "hello from loopback"}  # control: the named one works


def test_broad_allowed_ips_entry_does_not_exempt_loopback(attack, server):
    out = attack(get(server.url("/hello")), {"network": {"allow": True, "allowed_ips": ["0.0.0.0/0"]}})
    assert_denied(out, "network.block_private_networks", "127.0.0.0/8 (loopback)")
    assert server.requests == []


# --- redirects ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("location", "rule", "fragment"),
    [
        ("http://127.0.0.1:{other}/hello", "network.allowed_ips", "port {other} is not in allowed_ips"),
        ("http://169.254.169.254/latest/meta-data/", "network.block_private_networks", "169.254.0.0/16"),
        ("//169.254.169.254/latest/", "network.block_private_networks", "169.254.0.0/16"),
        ("http://10.0.0.1:{port}/", "network.block_private_networks", "10.0.0.0/8"),
        ("http://localhost:{port}/hello", "network.allowed_domains", "host localhost port"),
        ("http://0x7f000001:{other}/hello", "network.allowed_ips", "port {other} is not in allowed_ips"),
        ("http://[::ffff:127.0.0.1]:{other}/", "network.allowed_ips", "port {other} is not in allowed_ips"),
        ("file:///etc/passwd", "network.url", "scheme file: is not allowed"),
        ("gopher://127.0.0.1:{port}/", "network.url", "scheme gopher: is not allowed"),
        ("http://127.0.0.1:{port}@127.0.0.1:{other}/", "network.url", "credentials"),
    ],
    ids=[
        "other-port",
        "metadata",
        "scheme-relative-metadata",
        "rfc1918",
        "localhost-name",
        "hex-other-port",
        "mapped-other-port",
        "file",
        "gopher",
        "credentials",
    ],
)
def test_redirect_from_allowed_server_to_denied_target(attack, server, server2, location, rule, fragment):
    fill = {"port": server.port, "other": server2.port}
    server.redirect_to["0"] = location.format(**fill)
    out = attack(get(server.url("/redirect/0")), only(server))
    assert_denied(out, rule, fragment.format(**fill))
    assert server.paths() == ["/redirect/0"]  # the first hop happened, nothing after it
    assert server2.requests == []
    assert [e["decision"] for e in out.audit] == ["allow", "deny"]


def test_six_hop_redirect_chain_stops_at_five(attack, server):
    out = attack(get(server.url("/chain?n=6")), only(server))
    assert_denied(out, "network.allowed_ips", "more than 5 redirects", kind="LimitExceeded", audited=False)
    assert len(server.requests) == 6  # the request and 5 followed hops; hop 6 never sent
    out = attack(get(server.url("/chain?n=5")), only(server))
    assert out.value == {"ok": True, "value": "end of chain"}  # control: 5 hops is the cap, not less


def test_manifest_redirect_cap_is_enforced(attack, server):
    out = attack(get(server.url("/chain?n=2")), only(server, max_redirects=1))
    assert_denied(out, "network.allowed_ips", "more than 1 redirects", kind="LimitExceeded", audited=False)
    assert len(server.requests) == 2


def test_credentials_are_stripped_when_a_redirect_changes_origin(attack, server, server2):
    server.redirect_to["0"] = server2.url("/echo")
    server.redirect_to["1"] = "/echo"
    policy = {"network": {"allow": True, "allowed_ips": [f"127.0.0.1:{server.port}", f"127.0.0.1:{server2.port}"]}}
    headers = {"Authorization": "Bearer s3cr3t-token", "Cookie": "session=s3cr3t-cookie", "X-Trace": "keep"}
    body = f"""
    const cross = JSON.parse(await http_get({js(server.url("/redirect/0"))}, {js(headers)}));
    const same = JSON.parse(await http_get({js(server.url("/redirect/1"))}, {js(headers)}));
    return [cross.headers, same.headers];
    """
    out = attack(body, policy)
    cross, same = out.value["value"]
    assert "authorization" not in cross and "cookie" not in cross
    assert cross["x-trace"] == "keep"
    assert same["authorization"] == "Bearer s3cr3t-token" and same["cookie"] == "session=s3cr3t-cookie"
    (landed,) = server2.requests
    assert "s3cr3t" not in json.dumps(landed["headers"])
    assert "s3cr3t" not in "".join(line for line in map(json.dumps, out.audit))


# --- bodies ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "cap"),
    [("/big", 100_000), ("/nolength", 200_000), ("/bomb", 1_000_000)],
    ids=["oversized", "chunked-without-length", "gzip-bomb"],
)
def test_response_body_is_capped(attack, server, path, cap):
    out = attack(get(server.url(path)), only(server, max_response_bytes=cap))
    assert_denied(
        out,
        "network.allowed_ips",
        f"exceeds max_response_bytes ({cap} bytes)",
        kind="LimitExceeded",
        audited=False,
    )


# --- allow-list parsing tricks (names that never resolve outside this process) ------------------


@pytest.mark.parametrize(
    ("url", "rule", "fragment"),
    [
        (
            "http://svc.test.evil.invalid:{port}/",
            "network.allowed_domains",
            "host svc.test.evil.invalid port",
        ),
        ("http://svc.test@evil.invalid:{port}/", "network.url", "credentials"),
        ("http://evil.invalid:{port}/?svc.test", "network.allowed_domains", "host evil.invalid port"),
        ("http://evil.invalid:{port}#@svc.test", "network.allowed_domains", "host evil.invalid port"),
        ("http://evilsvc.test:{port}/", "network.allowed_domains", "host evilsvc.test port"),
        ("http://x.svc.test:{port}/", "network.allowed_domains", "host x.svc.test port"),
        ("http://svc.test:1/", "network.allowed_domains", "host svc.test port 1 is not"),
        ("http://svc.test\\@evil.invalid/", "network.url", "backslashes"),
        ("http://svc.test%2F@evil.invalid/", "network.url", "credentials"),
        ("http://svc.test\u3002evil.invalid/", "network.allowed_domains", "is not in allowed_domains"),
    ],
    ids=[
        "suffix-append",
        "userinfo",
        "query",
        "fragment",
        "no-dot-suffix",
        "subdomain-of-exact",
        "other-port",
        "backslash",
        "encoded-slash",
        "ideographic-dot",
    ],
)
def test_allowlist_parsing_tricks(attack, server, fake_dns, url, rule, fragment):
    calls = fake_dns({"svc.test": ["127.0.0.1"]})
    policy = {
        "network": {
            "allow": True,
            "allowed_domains": [f"svc.test:{server.port}"],
            "allowed_ips": [f"127.0.0.1:{server.port}"],
        }
    }
    out = attack(get(url.format(port=server.port)), policy)
    assert_denied(out, rule, fragment)
    assert calls == [] and server.requests == []


def test_allowed_name_with_case_and_trailing_dot_is_pinned_to_the_checked_address(attack, server, fake_dns):
    """Control for the tricks above, and DNS rebinding: the name is resolved once, the connection
    goes to that answer, and the Host header stays the name."""
    calls = fake_dns({"svc.test": [["127.0.0.1"], ["10.0.0.1"], ["169.254.169.254"]]})
    policy = {
        "network": {
            "allow": True,
            "allowed_domains": [f"svc.test:{server.port}"],
            "allowed_ips": [f"127.0.0.1:{server.port}"],
        }
    }
    out = attack(get(f"http://SVC.Test.:{server.port}/echo", {"Host": "evil.invalid"}), policy)
    assert out.value["ok"] is True, out.value
    echoed = json.loads(out.value["value"])
    assert echoed["headers"]["host"] == f"svc.test:{server.port}"  # the guest cannot set Host
    assert calls == ["svc.test"]  # one lookup: no second answer can move the connection


@pytest.mark.parametrize(
    ("answers", "fragment"),
    [
        (["127.0.0.1", "169.254.169.254"], "resolves to 169.254.169.254"),
        (["127.0.0.1", "10.1.2.3"], "resolves to 10.1.2.3"),
        (["127.0.0.1", "::ffff:192.168.0.1"], "via IPv4-mapped 192.168.0.1"),
    ],
    ids=["metadata", "rfc1918", "mapped-private"],
)
def test_a_name_with_any_blocked_answer_is_denied(attack, server, fake_dns, answers, fragment):
    fake_dns({"mixed.test": answers})
    policy = {
        "network": {
            "allow": True,
            "allowed_domains": [f"mixed.test:{server.port}"],
            "allowed_ips": [f"127.0.0.1:{server.port}"],
        }
    }
    out = attack(get(f"http://mixed.test:{server.port}/hello"), policy)
    assert_denied(out, "network.block_private_networks", fragment)
    assert server.requests == []


def test_name_resolving_to_loopback_is_blocked_like_the_address(attack, server, fake_dns):
    fake_dns({"127.0.0.1.nip.io": ["127.0.0.1"]})
    out = attack(get(f"http://127.0.0.1.nip.io:{server.port}/hello"), NET_POLICY)
    assert_denied(out, "network.block_private_networks", "host 127.0.0.1.nip.io resolves to 127.0.0.1")
    assert server.requests == []


def test_proxy_variables_are_ignored(attack, server, server2, monkeypatch):
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, server2.url("/"))
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    out = attack(get(server.url("/hello")), only(server))
    assert out.value == {"ok": True, "value": "hello from loopback"}
    assert server2.requests == []


@pytest.mark.parametrize(
    ("headers", "fragment"),
    [
        ({"X-A": "1\r\nHost: evil.invalid"}, "line break or NUL"),
        ({"X-A\r\nInjected": "1"}, "invalid header name"),
        ({"X-A": "caf\u00e9"}, "must be ASCII"),
    ],
    ids=["crlf-value", "crlf-name", "non-ascii"],
)
def test_header_injection_is_refused(attack, server, headers, fragment):
    out = attack(get(server.url("/echo"), headers), only(server))
    assert out.value["ok"] is False and out.value["name"] == "InvalidArgument", out.value
    assert fragment in out.value["message"]
    assert server.requests == []


def test_network_disabled_by_default(attack, server):
    out = attack(get(server.url("/hello")), {})
    assert_denied(out, "network.allow", "permissions.network.allow is false")
    assert server.requests == []


def test_network_guard_itself_refuses_non_loopback(_network_guard):
    """The suite's safety net works: a stray connect never leaves the machine."""
    import socket

    from tests.redteam.helpers import NetViolation

    with pytest.raises(NetViolation), socket.create_connection(("192.0.2.1", 9), timeout=0.1):
        pass
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo("example.com", 80)
    assert len(_network_guard) == 2
    _network_guard.clear()
