"""Network attacks by real JS agents against loopback test servers.

Every server here listens on 127.0.0.1 only, and every attack here aims at
loopback: should a rule break, the request would still stay on this machine.
Vectors aimed anywhere else (private ranges, the metadata IP, NAT64 and 6to4
disguises, public names) are decided without a socket or DNS lookup in
``test_net_decisions.py``, which covers every vector of this file too; only
those that ``net_vectors.stays_on_loopback`` accepts are replayed here. The
autouse network guard of conftest.py remains a safety net: it fails any test
whose process tries to connect to a non-loopback address or to look up a
real name.
"""

from __future__ import annotations

import json

import pytest

from tests.policy.policy_vectors import NET_BAD_URLS, NET_BLOCKED, NET_POLICY
from tests.redteam.helpers import NetViolation, assert_denied, js, make_guard
from tests.redteam.net_vectors import (
    ALLOWLIST_TRICKS,
    LOOPBACK_DISGUISES,
    MIXED_ANSWERS,
    REBINDING,
    REDIRECT_TARGETS,
    allowlist_policy,
    answers_stay_on_loopback,
    loopback_only,
)

# The vectors that may run end to end: every host they could reach is loopback.
BLOCKED_ON_LOOPBACK = loopback_only(NET_BLOCKED, lambda v: v[0])
BAD_URLS_ON_LOOPBACK = loopback_only(NET_BAD_URLS, lambda v: v[0])
DISGUISES_ON_LOOPBACK = loopback_only(LOOPBACK_DISGUISES, lambda v: f"http://{v[0]}:{{port}}/")
REDIRECTS_ON_LOOPBACK = loopback_only(REDIRECT_TARGETS, lambda v: v[1])
MIXED_ON_LOOPBACK = [v for v in MIXED_ANSWERS if answers_stay_on_loopback(v[1])]


def only(server, port_policy: dict | None = None, **net) -> dict:
    """Network policy that names exactly this loopback server (host and port)."""
    return {"network": {"allow": True, "allowed_ips": [f"127.0.0.1:{server.port}"], "timeout": 10, **net}}


def get(url: str, headers: dict | None = None) -> str:
    return f"return await http_get({js(url)}, {js(headers or {})});"


# --- the block list, replayed through the engine (its loopback part) ---------------------------


@pytest.mark.parametrize(("url", "rule", "fragment"), BLOCKED_ON_LOOPBACK, ids=[v[0] for v in BLOCKED_ON_LOOPBACK])
def test_blocked_address_forms_are_denied_before_connecting(attack, url, rule, fragment):
    out = attack(get(url), NET_POLICY)
    assert_denied(out, rule, fragment, capability="network")


@pytest.mark.parametrize(("url", "fragment"), BAD_URLS_ON_LOOPBACK, ids=[v[0] for v in BAD_URLS_ON_LOOPBACK])
def test_bad_urls_and_schemes_are_refused(attack, url, fragment):
    out = attack(get(url), NET_POLICY)
    assert_denied(out, "network.url", fragment, capability="network")


# --- loopback in disguise, aimed at a live server ---------------------------------------------


@pytest.mark.parametrize(("host", "rule", "fragment"), DISGUISES_ON_LOOPBACK, ids=[v[0] for v in DISGUISES_ON_LOOPBACK])
def test_loopback_server_is_unreachable_under_the_default_block(attack, server, host, rule, fragment):
    out = attack(get(f"http://{host}:{server.port}/hello"), NET_POLICY)
    assert_denied(out, rule, fragment)
    assert server.requests == []
    assert "hello from loopback" not in json.dumps(out.value)


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
    [v[1:] for v in REDIRECTS_ON_LOOPBACK],
    ids=[v[0] for v in REDIRECTS_ON_LOOPBACK],
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


# Refused while matching the allow list, before any lookup; the scripted DNS answers loopback only.
@pytest.mark.parametrize(
    ("url", "rule", "fragment"), [v[1:] for v in ALLOWLIST_TRICKS], ids=[v[0] for v in ALLOWLIST_TRICKS]
)
def test_allowlist_parsing_tricks(attack, server, fake_dns, url, rule, fragment):
    calls = fake_dns({"svc.test": ["127.0.0.1"]})
    out = attack(get(url.format(port=server.port)), allowlist_policy(server.port))
    assert_denied(out, rule, fragment)
    assert calls == [] and server.requests == []


def test_allowed_name_with_case_and_trailing_dot_is_pinned_to_the_checked_address(attack, server, fake_dns):
    """Control for the tricks above, and DNS rebinding: the name is resolved once, the connection
    goes to that answer, and the Host header stays the name. Every later answer is loopback too
    (127.0.0.2, 127.0.0.3, which the policy does not name); the off-machine rebinding sequence is
    decided in test_net_decisions.py."""
    calls = fake_dns({"svc.test": [answers for answers, _ in REBINDING["loopback-only"]]})
    out = attack(get(f"http://SVC.Test.:{server.port}/echo", {"Host": "evil.invalid"}), allowlist_policy(server.port))
    assert out.value["ok"] is True, out.value
    echoed = json.loads(out.value["value"])
    assert echoed["headers"]["host"] == f"svc.test:{server.port}"  # the guest cannot set Host
    assert calls == ["svc.test"]  # one lookup: no second answer can move the connection


@pytest.mark.parametrize(
    ("answers", "fragment"), [v[1:] for v in MIXED_ON_LOOPBACK], ids=[v[0] for v in MIXED_ON_LOOPBACK]
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
    # A reserved name in the role of 127.0.0.1.nip.io (decided by name in test_net_decisions.py):
    # had the scripted DNS not been in place, no real lookup of a public name could follow.
    fake_dns({"127.0.0.1.alias.test": ["127.0.0.1"]})
    out = attack(get(f"http://127.0.0.1.alias.test:{server.port}/hello"), NET_POLICY)
    assert_denied(out, "network.block_private_networks", "host 127.0.0.1.alias.test resolves to 127.0.0.1")
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
    """The suite's safety net works, tested over recorders instead of the real socket functions:
    a guard that failed here would hand the recorder a non-loopback address, not the network."""
    import socket

    passed: list[tuple[str, object]] = []
    guard = make_guard(
        lambda sock, address: passed.append(("connect", address)),
        lambda sock, address: passed.append(("connect_ex", address)) or 0,
        lambda host, *args, **kwargs: passed.append(("getaddrinfo", host)),
    )
    # The autouse fixture put the same kind of guard in front of the real functions.
    assert socket.socket.connect.__qualname__ == guard.connect.__qualname__
    assert socket.getaddrinfo.__qualname__ == guard.getaddrinfo.__qualname__
    with socket.socket(socket.AF_INET) as v4, socket.socket(socket.AF_INET6) as v6:
        for sock, address in [
            (v4, ("192.0.2.1", 9)),
            (v4, ("169.254.169.254", 80)),
            (v6, ("::ffff:10.0.0.1", 80, 0, 0)),
            (v6, ("fe80::1%lo", 80, 0, 0)),
        ]:
            with pytest.raises(NetViolation):
                guard.connect(sock, address)
            with pytest.raises(NetViolation):
                guard.connect_ex(sock, address)
        guard.connect(v4, ("127.0.0.2", 9))
        guard.connect_ex(v6, ("::1", 9, 0, 0))
        guard.connect(v6, ("::ffff:127.0.0.1", 9, 0, 0))
    for name in ("example.com", b"metadata.google.internal"):
        with pytest.raises(socket.gaierror):
            guard.getaddrinfo(name, 80)
    with pytest.raises(socket.gaierror):
        guard.getaddrinfo("evil.invalid", 80)  # reserved: refused without counting as a violation
    guard.getaddrinfo("localhost", 80)
    guard.getaddrinfo("10.0.0.1", 80)  # a literal needs no lookup: getaddrinfo only parses it
    assert passed == [
        ("connect", ("127.0.0.2", 9)),
        ("connect_ex", ("::1", 9, 0, 0)),
        ("connect", ("::ffff:127.0.0.1", 9, 0, 0)),
        ("getaddrinfo", "localhost"),
        ("getaddrinfo", "10.0.0.1"),
    ]
    assert len(guard.violations) == 10
    assert _network_guard == []  # the guard of this test run saw nothing
