"""Network rules and net.fetch against real HTTP servers on 127.0.0.1."""

from __future__ import annotations

import gzip
import ipaddress
import json
import time
import zlib
from urllib.parse import quote, urljoin

import pytest
from policy_vectors import NET_BAD_URLS, NET_BLOCKED, NET_POLICY

from hugind.errors import HostIOError, InvalidArgument, LimitHit, PermissionDenied, Timeout
from hugind.host.net import BoundedDecoder
from hugind.policy.net import classify, embedded_ipv4, parse_domain_rule, parse_host, parse_inet_aton

PUBLIC = "93.184.216.34"


def fake_resolver(table: dict[str, list[str]], calls: list[str] | None = None):
    def resolve(host: str, port: int, timeout: float) -> list[str]:
        if calls is not None:
            calls.append(host)
        if host not in table:
            raise OSError("no such host")
        return table[host]

    return resolve


# --- address parsing and classification -------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2130706433", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("0X7F000001", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0177.0.0.01", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("127.0.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("0", "0.0.0.0"),
        ("10.0x10.1", "10.16.0.1"),
        ("4294967295", "255.255.255.255"),
        ("169.254.43518", "169.254.169.254"),
    ],
)
def test_inet_aton_forms(text, expected):
    assert str(parse_inet_aton(text)) == expected


@pytest.mark.parametrize(
    "text", ["4294967296", "256.1.1.1", "1.2.3.4.5", "08.1.1.1", "1..1", "evil.123", "1.2.0x100.4"]
)
def test_numeric_looking_but_invalid_hosts_are_errors(text):
    with pytest.raises(ValueError):
        parse_host(text)


@pytest.mark.parametrize("text", ["example.com", "1.example.com", "deadbeef", "a-b.c", "xn--bcher-kva.example"])
def test_names_stay_names(text):
    assert parse_host(text) == text


def test_names_are_normalized():
    assert parse_host("ExAmPle.COM.") == "example.com"
    assert parse_host("bücher.example") == "xn--bcher-kva.example"
    for bad in ("a..b", "a b", "exa%6dple.com", "-" * 64 + ".com", "under(score).com"):
        with pytest.raises(ValueError):
            parse_host(bad)


def test_embedded_ipv4_forms():
    cases = {
        "::ffff:10.0.0.1": ("10.0.0.1", "IPv4-mapped"),
        "::ffff:0:10.0.0.1": ("10.0.0.1", "IPv4-translated"),
        "64:ff9b::10.0.0.1": ("10.0.0.1", "NAT64"),
        "2002:0a00:0001::": ("10.0.0.1", "6to4"),
        "::10.0.0.1": ("10.0.0.1", "IPv4-compatible"),
    }
    for text, (v4, form) in cases.items():
        found = embedded_ipv4(ipaddress.IPv6Address(text))
        assert found is not None and (str(found[0]), found[1]) == (v4, form)
    assert embedded_ipv4(ipaddress.IPv6Address("2606:4700::1111")) is None


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "1.1.1.1",
        PUBLIC,
        "2606:4700:4700::1111",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "2002:808:808::",
    ],
)
def test_public_addresses_are_not_blocked(address):
    assert classify(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(
    ("address", "network"),
    [
        ("0.1.2.3", "0.0.0.0/8"),
        ("127.255.255.254", "127.0.0.0/8"),
        ("10.255.0.1", "10.0.0.0/8"),
        ("172.31.255.255", "172.16.0.0/12"),
        ("192.168.0.1", "192.168.0.0/16"),
        ("100.127.255.255", "100.64.0.0/10"),
        ("169.254.169.254", "169.254.0.0/16"),
        ("192.0.0.170", "192.0.0.0/24"),
        ("198.18.0.1", "198.18.0.0/15"),
        ("239.255.255.250", "224.0.0.0/4"),
        ("240.0.0.1", "240.0.0.0/4"),
        ("255.255.255.255", "255.255.255.255/32"),
        ("::", "::/128"),
        ("::1", "::1/128"),
        ("fc00::1", "fc00::/7"),
        ("fdff::1", "fc00::/7"),
        ("fe80::1", "fe80::/10"),
        ("febf::1", "fe80::/10"),
        ("ff02::1", "ff00::/8"),
        ("2001:db8::1", "2001:db8::/32"),
        ("2001:0::1", "2001::/23"),
        ("64:ff9b:1::1", "64:ff9b:1::/48"),
    ],
)
def test_blocked_ranges(address, network):
    hit = classify(ipaddress.ip_address(address))
    assert hit is not None and str(hit.range.network) == network


# --- check_connect ------------------------------------------------------------------------


@pytest.mark.parametrize(("url", "rule", "fragment"), NET_BLOCKED, ids=[v[0] for v in NET_BLOCKED])
def test_blocked_addresses_in_every_spelling(harness, url, rule, fragment):
    h = harness(NET_POLICY)
    with pytest.raises(PermissionDenied) as info:
        h.engine.check_connect(url)
    assert fragment in info.value.message
    assert info.value.message.startswith("network: ")
    entry = h.audit[-1]
    assert (entry["capability"], entry["decision"], entry["rule"]) == ("network", "deny", rule)
    assert entry["request"]["url"] == url


@pytest.mark.parametrize(("url", "fragment"), NET_BAD_URLS, ids=[v[0] for v in NET_BAD_URLS])
def test_malformed_or_tricky_urls(harness, url, fragment):
    h = harness(NET_POLICY)
    with pytest.raises(PermissionDenied) as info:
        h.engine.check_connect(url)
    assert fragment in info.value.message
    assert h.audit[-1]["rule"] == "network.url"


@pytest.mark.parametrize("url", ["http://[::1/", "http://a]b/", "http://[]/", "http://[127.0.0.1]/"])
def test_urls_the_url_splitter_rejects_are_denied_not_crashes(harness, url):
    # urlsplit raises ValueError on these; it used to escape the policy (found by tests/fuzz)
    h = harness(NET_POLICY)
    with pytest.raises(PermissionDenied, match="malformed URL"):
        h.engine.check_connect(url)
    assert h.audit[-1]["rule"] == "network.url"


def test_metadata_message_is_exact(harness):
    h = harness(NET_POLICY)
    with pytest.raises(PermissionDenied) as info:
        h.engine.check_connect("http://169.254.169.254/latest/meta-data/")
    assert (
        info.value.message == "network: host 169.254.169.254 is in blocked range 169.254.0.0/16 (link-local/metadata)"
    )


def test_network_disabled_by_default(harness):
    h = harness(None)
    with pytest.raises(PermissionDenied, match=r"permissions.network.allow is false"):
        h.engine.check_connect(f"http://{PUBLIC}/")


DOMAINS = {"network": {"allow": True, "allowed_domains": ["allowed.com", "*.good.org", "api.port.net:8443"]}}


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("http://allowed.com/", True),
        ("https://ALLOWED.COM./x", True),
        ("http://allowed.com:8080/", True),
        ("http://x.good.org/", True),
        ("http://a.b.good.org/", True),
        ("https://api.port.net:8443/", True),
        ("https://api.port.net/", False),
        ("http://good.org/", False),
        ("http://evilgood.org/", False),
        ("http://allowed.com.evil.com/", False),
        ("http://sub.allowed.com/", False),
        ("http://allowedxcom/", False),
        ("http://good.org.evil/", False),
    ],
)
def test_domain_allowlist_matching(harness, url, ok):
    names = ["allowed.com", "x.good.org", "a.b.good.org", "api.port.net", "good.org", "evilgood.org"]
    names += ["allowed.com.evil.com", "sub.allowed.com", "allowedxcom", "good.org.evil"]
    h = harness(DOMAINS, resolver=fake_resolver({n: [PUBLIC] for n in names}))
    if ok:
        target = h.engine.check_connect(url)
        assert target.addresses == (PUBLIC,)
        assert h.audit[-1]["rule"] == "network.allowed_domains"
    else:
        with pytest.raises(PermissionDenied, match="is not in allowed_domains"):
            h.engine.check_connect(url)


def test_allowlisted_ip_literal_does_not_match_domains(harness):
    h = harness(DOMAINS)
    with pytest.raises(PermissionDenied, match=f"address {PUBLIC} port 80 is not in allowed_ips"):
        h.engine.check_connect(f"http://{PUBLIC}/")


def test_name_resolving_to_a_private_address_is_denied(harness):
    perms = {"network": {"allow": True, "allowed_domains": ["*.nip.io", "rebind.example"]}}
    table = {"10.0.0.1.nip.io": ["10.0.0.1"], "rebind.example": [PUBLIC, "10.0.0.1"]}
    h = harness(perms, resolver=fake_resolver(table))
    with pytest.raises(PermissionDenied) as info:
        h.engine.check_connect("http://10.0.0.1.nip.io/")
    assert "host 10.0.0.1.nip.io resolves to 10.0.0.1, which is in blocked range 10.0.0.0/8" in info.value.message
    with pytest.raises(PermissionDenied, match=r"resolves to 10\.0\.0\.1"):  # any bad answer denies
        h.engine.check_connect("http://rebind.example/")


def test_name_is_resolved_exactly_once_per_check(harness):
    calls: list[str] = []
    h = harness(
        {"network": {"allow": True, "allowed_domains": ["svc.example"]}},
        resolver=fake_resolver({"svc.example": [PUBLIC, "2606:4700::1"]}, calls),
    )
    target = h.engine.check_connect("https://svc.example/a?b=1")
    assert calls == ["svc.example"]
    assert target.addresses == (PUBLIC, "2606:4700::1")
    assert (target.scheme, target.host, target.port, target.target) == ("https", "svc.example", 443, "/a?b=1")
    assert h.audit[-1]["request"]["addresses"] == [PUBLIC, "2606:4700::1"]


def test_resolution_failure_is_a_denial(harness):
    h = harness({"network": {"allow": True}}, resolver=fake_resolver({}))
    with pytest.raises(PermissionDenied, match=r"cannot resolve host nowhere\.invalid"):
        h.engine.check_connect("http://nowhere.invalid/")


def test_explicit_loopback_entry_overrides_the_private_block(harness):
    h = harness({"network": {"allow": True, "allowed_ips": ["127.0.0.1"]}})
    assert h.engine.check_connect("http://127.0.0.1:9/").addresses == ("127.0.0.1",)
    assert h.engine.check_connect("http://2130706433:9/").host == "127.0.0.1"  # same address, any spelling
    for url, fragment in [
        ("http://127.0.0.2/", "127.0.0.0/8 (loopback)"),
        ("http://[::1]/", "::1/128 (loopback)"),
        ("http://0.0.0.0/", "0.0.0.0/8"),
        ("http://10.0.0.1/", "10.0.0.0/8"),
    ]:
        with pytest.raises(PermissionDenied, match=fragment.replace("(", r"\(").replace(")", r"\)")):
            h.engine.check_connect(url)


def test_broad_allowed_ips_do_not_unblock_private_ranges(harness):
    h = harness({"network": {"allow": True, "allowed_ips": ["0.0.0.0/0", "::/0"]}})
    assert h.engine.check_connect(f"http://{PUBLIC}/").addresses == (PUBLIC,)
    for url in ("http://127.0.0.1/", "http://169.254.169.254/", "http://10.1.2.3/", "http://[fd00::1]/"):
        with pytest.raises(PermissionDenied, match="blocked range"):
            h.engine.check_connect(url)


def test_always_blocked_ranges_stay_blocked(harness):
    h = harness(
        {
            "network": {
                "allow": True,
                "block_private_networks": False,
                "allowed_ips": ["0.0.0.0/8", "224.0.0.0/4"],
            }
        }
    )
    for url in ("http://0.0.0.0/", "http://224.0.0.1/"):
        with pytest.raises(PermissionDenied, match="blocked range"):
            h.engine.check_connect(url)


def test_private_networks_reachable_when_block_is_off(harness):
    h = harness({"network": {"allow": True, "block_private_networks": False}})
    assert h.engine.check_connect("http://10.0.0.1/").addresses == ("10.0.0.1",)
    assert h.engine.check_connect("http://[::1]/").addresses == ("::1",)


def test_ports_in_allowed_ips(harness):
    h = harness({"network": {"allow": True, "allowed_ips": ["127.0.0.1:8080", "[::1]:9090", "10.0.0.0/8:443"]}})
    h.engine.check_connect("http://127.0.0.1:8080/")
    h.engine.check_connect("http://[::1]:9090/")
    h.engine.check_connect("https://10.2.3.4/")
    for url in ("http://127.0.0.1:8081/", "http://[::1]:9091/", "http://10.2.3.4/"):
        with pytest.raises(PermissionDenied, match="not in allowed_ips"):
            h.engine.check_connect(url)


def test_domain_rule_parsing_rejects_garbage():
    for bad in ("*", "*.", "a.*.com", "exa mple.com", "127.0.0.1", "host:0", "host:x", "[::1"):
        with pytest.raises(ValueError):
            parse_domain_rule(bad)


# --- net.fetch against real loopback servers ------------------------------------------------


def loopback(server=None, **extra):
    ips = ["127.0.0.1"] if server is None else [f"127.0.0.1:{server.port}"]
    return {"network": {"allow": True, "allowed_ips": ips, "timeout": 10, **extra}}


def test_fetch_works_and_pins_to_the_checked_address(harness, http_server):
    h = harness(loopback())
    result = h.call("net.fetch", url=http_server.url("/hello"))
    assert result["status"] == 200 and result["body"] == "hello"
    assert result["headers"]["x-test"] == "1" and result["url"] == http_server.url("/hello")
    sent = http_server.requests[-1]["headers"]
    assert sent["Host"] == f"127.0.0.1:{http_server.port}"
    assert sent["Accept-Encoding"] == "gzip, deflate"
    assert [e["decision"] for e in h.audit] == ["allow"]


def test_fetch_by_name_connects_to_the_checked_ip_with_the_name_as_host(harness, http_server):
    calls: list[str] = []
    perms = {"network": {"allow": True, "allowed_domains": ["svc.test"], "allowed_ips": ["127.0.0.1"]}}
    h = harness(perms, resolver=fake_resolver({"svc.test": ["127.0.0.1"]}, calls))
    result = h.call("net.fetch", url=f"http://svc.test:{http_server.port}/hello")
    assert result["body"] == "hello"
    assert calls == ["svc.test"]
    assert http_server.requests[-1]["headers"]["Host"] == f"svc.test:{http_server.port}"


def test_post_with_headers_and_body(harness, http_server):
    h = harness(loopback())
    result = h.call(
        "net.fetch",
        url=http_server.url("/echo"),
        method="post",
        headers={
            "Content-Type": "text/plain",
            "X-Agent": "a",
            "Host": "evil.example",
            "Accept-Encoding": "br",
        },
        body="héllo",
    )
    echoed = json.loads(result["body"])
    assert echoed["method"] == "POST" and echoed["body"] == "héllo"
    assert echoed["headers"]["X-Agent"] == "a"
    assert echoed["headers"]["Host"] == f"127.0.0.1:{http_server.port}"  # the guest cannot pick the vhost
    assert echoed["headers"]["Accept-Encoding"] == "gzip, deflate"


def test_head_request_has_no_body(harness, http_server):
    h = harness(loopback())
    result = h.call("net.fetch", url=http_server.url("/hello"), method="HEAD")
    assert result["status"] == 200 and result["body"] == ""


def test_gzip_bodies_are_decoded(harness, http_server):
    h = harness(loopback())
    assert h.call("net.fetch", url=http_server.url("/gzip"))["body"] == "héllo gzip"


def test_redirects_are_followed_and_rechecked(harness, http_server):
    h = harness(loopback())
    target = http_server.url("/hello")
    result = h.call("net.fetch", url=http_server.url(f"/redirect?to={target}"))
    assert result["status"] == 200 and result["url"] == target
    assert [e["decision"] for e in h.audit] == ["allow", "allow"]


def test_manual_redirect_answers_with_the_redirect_and_contacts_nothing_else(harness, http_server, other_server):
    h = harness(loopback())
    target = other_server.url("/hello")
    result = h.call("net.fetch", url=http_server.url(f"/redirect?to={target}"), redirect="manual")
    assert result["status"] == 302 and result["headers"]["location"] == target
    assert result["url"] == http_server.url(f"/redirect?to={target}")
    assert other_server.paths() == [] and [e["decision"] for e in h.audit] == ["allow"]
    assert isinstance(h.fails("net.fetch", url=target, redirect="error"), InvalidArgument)
    # "manual" changes what is followed, never what is checked: the first hop is still decided
    # (a loopback port outside allowed_ips, so a broken rule would still stay on this machine).
    only = harness(loopback(http_server))
    assert isinstance(only.fails("net.fetch", url=target, redirect="manual"), PermissionDenied)
    assert other_server.paths() == []


def test_redirect_to_a_denied_port_is_denied(harness, http_server, other_server):
    h = harness(loopback(http_server))
    err = h.fails("net.fetch", url=http_server.url(f"/redirect?to={other_server.url('/hello')}"))
    assert isinstance(err, PermissionDenied)
    assert f"address 127.0.0.1 port {other_server.port} is not in allowed_ips" in err.message
    assert [e["decision"] for e in h.audit] == ["allow", "deny"]
    assert other_server.requests == []


@pytest.mark.parametrize(
    ("location", "fragment"),
    [
        ("file:///etc/passwd", "scheme file: is not allowed"),
        ("ftp://127.0.0.1/", "scheme ftp: is not allowed"),
    ],
)
def test_redirect_to_denied_targets(harness, http_server, location, fragment):
    h = harness(loopback())
    err = h.fails("net.fetch", url=http_server.url(f"/redirect?to={location}"))
    assert isinstance(err, PermissionDenied) and fragment in err.message


@pytest.mark.parametrize("location", ["http://a]b/", "http://a]b:8080/x"])
def test_an_unparseable_redirect_is_an_audited_denial(harness, http_server, location):
    h = harness(loopback())
    err = h.fails("net.fetch", url=http_server.url(f"/redirect?to={quote(location, safe='')}"))
    assert isinstance(err, PermissionDenied)
    assert [(e["decision"], e["rule"]) for e in h.audit][-1] == ("deny", "network.url")


@pytest.mark.parametrize(
    ("location", "rule", "fragment"),
    [
        ("http://169.254.169.254/latest/meta-data/", "network.block_private_networks", "169.254.0.0/16 (link-local"),
        ("http://[::ffff:169.254.169.254]/", "network.block_private_networks", "169.254.0.0/16"),
        ("http://0.0.0.0/", "network.blocked-range", "0.0.0.0/8"),
    ],
)
def test_redirect_off_loopback_is_denied_by_the_check_of_the_next_hop(harness, location, rule, fragment):
    """Redirect targets off this machine, decided without fetching: net.fetch re-checks every hop
    with check_connect(urljoin(current URL, Location)), so that is what is asked here."""
    h = harness(loopback())
    first = h.engine.check_connect("http://127.0.0.1:8080/redirect")
    with pytest.raises(PermissionDenied) as info:
        h.engine.check_connect(urljoin(first.url, location))
    assert fragment in info.value.message
    assert [(e["decision"], e["rule"]) for e in h.audit] == [("allow", "network.allowed_ips"), ("deny", rule)]


def test_five_redirects_pass_six_do_not(harness, http_server):
    h = harness(loopback())
    assert h.call("net.fetch", url=http_server.url("/chain?n=5"))["body"] == "end of chain"
    err = h.fails("net.fetch", url=http_server.url("/chain?n=6"))
    assert isinstance(err, LimitHit) and "more than 5 redirects" in err.message


def test_redirect_chains_end_at_max_redirects(harness, http_server):
    h = harness(loopback(max_redirects=2))
    assert h.call("net.fetch", url=http_server.url("/chain?n=2"))["body"] == "end of chain"
    err = h.fails("net.fetch", url=http_server.url("/redirect?to=/redirect?to=/redirect?to=/redirect"))
    assert isinstance(err, LimitHit) and "more than 2 redirects" in err.message


def test_credentials_are_dropped_when_the_origin_changes(harness, http_server, other_server):
    h = harness(loopback())
    secret = {"Authorization": "Bearer s3cret", "Cookie": "sid=1", "X-Keep": "yes"}
    result = h.call("net.fetch", url=http_server.url(f"/redirect?to={other_server.url('/echo')}"), headers=secret)
    sent = json.loads(result["body"])["headers"]
    assert "Authorization" not in sent and "Cookie" not in sent and sent["X-Keep"] == "yes"
    result = h.call("net.fetch", url=http_server.url("/redirect?to=/echo"), headers=secret)
    sent = json.loads(result["body"])["headers"]
    assert sent["Authorization"] == "Bearer s3cret" and sent["Cookie"] == "sid=1"
    assert all("s3cret" not in json.dumps(e) for e in h.audit)


def test_303_turns_a_post_into_a_get(harness, http_server):
    h = harness(loopback())
    result = h.call("net.fetch", url=http_server.url("/redirect?status=303&to=/echo"), method="POST", body="x")
    assert json.loads(result["body"])["method"] == "GET"
    result = h.call("net.fetch", url=http_server.url("/redirect?status=307&to=/echo"), method="POST", body="x")
    assert json.loads(result["body"]) | {"headers": None} == {"method": "POST", "body": "x", "headers": None}


def test_oversized_bodies_hit_the_cap(harness, http_server):
    h = harness(loopback(max_response_bytes=100_000))
    for path in ("/big", "/chunked"):
        err = h.fails("net.fetch", url=http_server.url(path))
        assert isinstance(err, LimitHit)
        assert err.message == "network: response body exceeds max_response_bytes (100000 bytes)"
    h2 = harness(loopback(max_response_bytes=2_000_000))
    assert len(h2.call("net.fetch", url=http_server.url("/chunked"))["body"]) == 1_000_000


def test_gzip_bomb_stops_at_the_cap(harness, http_server):
    h = harness(loopback(max_response_bytes=1_000_000))
    started = time.monotonic()
    err = h.fails("net.fetch", url=http_server.url("/bomb"))
    assert isinstance(err, LimitHit) and "max_response_bytes (1000000 bytes)" in err.message
    assert time.monotonic() - started < 10


def test_bounded_decoder_never_yields_big_pieces():
    bomb = gzip.compress(b"\0" * 5_000_000)
    decoder = BoundedDecoder("gzip")
    sizes = [len(piece) for piece in decoder.feed(bomb)]
    assert sum(sizes) == 5_000_000 and max(sizes) <= 1 << 16
    raw = zlib.compress(b"abc" * 1000)
    assert b"".join(BoundedDecoder("deflate").feed(raw)) == b"abc" * 1000
    raw_deflate = zlib.compressobj(wbits=-15)
    data = raw_deflate.compress(b"xyz" * 100) + raw_deflate.flush()
    assert b"".join(BoundedDecoder("deflate").feed(data)) == b"xyz" * 100
    two_members = gzip.compress(b"a") + gzip.compress(b"b")
    assert b"".join(BoundedDecoder("gzip").feed(two_members)) == b"ab"
    with pytest.raises(HostIOError, match="unsupported content-encoding"):
        BoundedDecoder("br")
    with pytest.raises(HostIOError, match="stacked"):
        BoundedDecoder("gzip, gzip")


def test_slow_drip_times_out(harness, http_server):
    h = harness(loopback(timeout=1))
    started = time.monotonic()
    err = h.fails("net.fetch", url=http_server.url("/slow"))
    assert isinstance(err, Timeout)
    assert time.monotonic() - started < 5


def test_run_deadline_bounds_a_fetch(harness, http_server):
    h = harness(loopback(timeout=30), deadline=time.monotonic() + 1)
    started = time.monotonic()
    assert isinstance(h.fails("net.fetch", url=http_server.url("/slow")), Timeout)
    assert time.monotonic() - started < 5
    h2 = harness(loopback(), deadline=time.monotonic() - 1)
    assert "deadline has passed" in h2.fails("net.fetch", url=http_server.url("/hello")).message


def test_proxy_variables_are_ignored(harness, http_server, monkeypatch):
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:1")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    h = harness(loopback())
    assert h.call("net.fetch", url=http_server.url("/hello"))["body"] == "hello"


def test_connection_refused_is_an_io_error(harness):
    h = harness(loopback())
    err = h.fails("net.fetch", url="http://127.0.0.1:1/")
    assert isinstance(err, HostIOError) and "cannot connect to 127.0.0.1 port 1" in err.message


def test_bad_fetch_arguments(harness, http_server):
    h = harness(loopback())
    assert isinstance(h.fails("net.fetch", url=http_server.url("/"), method="TRACE"), InvalidArgument)
    err = h.fails("net.fetch", url=http_server.url("/"), headers={"X": "a\r\nInjected: 1"})
    assert isinstance(err, InvalidArgument) and "line break" in err.message
    assert isinstance(h.fails("net.fetch", url=http_server.url("/"), headers={"Bad Name": "x"}), InvalidArgument)
    assert isinstance(h.fails("net.fetch", url=http_server.url("/"), headers=["x"]), InvalidArgument)
    assert isinstance(h.fails("net.fetch"), InvalidArgument)


def test_https_connects_to_the_checked_ip_with_the_name_for_sni_and_verification(harness, tls_server):
    calls: list[str] = []
    perms = {"network": {"allow": True, "allowed_domains": ["svc.test"], "allowed_ips": ["127.0.0.1"]}}
    h = harness(perms, resolver=fake_resolver({"svc.test": ["127.0.0.1"]}, calls))
    err = h.fails("net.fetch", url=f"https://svc.test:{tls_server.port}/hello")
    assert isinstance(err, HostIOError)  # self-signed: the certificate is verified, not skipped
    assert calls == ["svc.test"]
    assert tls_server.sni == ["svc.test"]
