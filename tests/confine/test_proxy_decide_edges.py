"""hugind/confine/proxy/decide.py at its edges: CONNECT authorities at the limits of what is
accepted, and which rule a refusal is reported under when the error carries none.

Written against the survivors of a mutation run (bench/mutation.py confine.proxy.decide). No
socket, no DNS: the engine's resolver raises if it is asked anything.
"""

from __future__ import annotations

import string
from pathlib import Path

import pytest

from hugind.confine.proxy.base import Reply
from hugind.confine.proxy.decide import connect_url, decide, forward_url, rule_of
from hugind.errors import HostCallError, PermissionDenied
from tests.confine.proxy_helpers import make_engine, refusing_resolver


def bad(authority: str) -> str:
    with pytest.raises(Reply) as caught:
        connect_url(authority)
    assert caught.value.status == 400
    return caught.value.message


@pytest.mark.parametrize(
    ("authority", "url"),
    [
        ("h:1", "https://h:1/"),
        ("h:65535", "https://h:65535/"),
        ("[::]:443", "https://[::]:443/"),
        # Every character the checks allow, at once: the allowed sets are not mistaken for a bound.
        ("[abcd:ef01:2345:6789:ABCD:EF01:1.2.3.4]:443", "https://[abcd:ef01:2345:6789:ABCD:EF01:1.2.3.4]:443/"),
        (
            f"{string.ascii_letters}{string.digits}.-_:443",
            f"https://{string.ascii_letters}{string.digits}.-_:443/",
        ),
    ],
    ids=["port-1", "port-65535", "ipv6-any", "all-ipv6-chars", "all-name-chars"],
)
def test_authorities_at_the_edges_are_accepted(authority, url):
    assert connect_url(authority) == url


@pytest.mark.parametrize(
    "authority",
    ["h:0", "h:65536", "abc]:80", "[abc:80", "[]:443", "[fe80::1%eth0]:443", "h", ":443", "h:443/x", "u@h:443"],
)
def test_authorities_that_are_not_host_port_are_refused(authority):
    assert bad(authority) == f"proxy: CONNECT needs host:port, got {authority!r}"


def test_a_long_authority_is_shown_cut_at_200_characters():
    authority = "x" * 250 + ":1:2"
    assert bad(authority) == f"proxy: CONNECT needs host:port, got {authority[:200]!r}"


def _denied_url(engine, url: str) -> str:
    """A real decision: ``url`` refused by the engine (its audit entry written)."""
    with pytest.raises(PermissionDenied) as denied:
        engine.check_connect(url)
    return denied.value.rule


def test_rule_of_prefers_the_rule_the_error_carries(tmp_path: Path):
    engine = make_engine(tmp_path, {"allowed_ips": ["127.0.0.1"]}, refusing_resolver([]))
    _denied_url(engine, "https://10.0.0.1:443/")
    error = HostCallError("refused")
    error.rule = "network.some-rule"
    assert rule_of(engine, error, "https://10.0.0.1:443/") == "network.some-rule"


def test_rule_of_falls_back_to_the_latest_network_denial_of_that_very_url(tmp_path: Path):
    engine = make_engine(tmp_path, {"allowed_ips": ["127.0.0.1"]}, refusing_resolver([]))
    url = "https://10.0.0.1:443/" + "p" * 1100  # longer than an audit string: kept cut, still matched
    first = _denied_url(engine, url)
    assert first in ("network.allowed_ips", "network.block_private_networks")
    no_rule = HostCallError("refused")  # an error that carries no rule
    assert rule_of(engine, no_rule, url) == first
    # Later entries that are not a network denial of this URL change nothing (the log cuts
    # their long URLs the same way) ...
    engine.audit.write("network", {"url": "https://10.0.0.2:443/"}, False, "network.other-url")
    engine.audit.write("filesystem", {"url": url}, False, "filesystem.not-network")
    engine.audit.write("network", {"url": url}, True, "network.allowed-later")
    engine.audit.write("network", {}, False, "network.no-request-url")
    assert rule_of(engine, no_rule, url) == first
    # ... the latest network denial of the URL wins.
    engine.audit.write("network", {"url": url}, False, "network.latest")
    assert rule_of(engine, no_rule, url) == "network.latest"
    # No entry at all for a URL: the capability's name.
    assert rule_of(engine, no_rule, "https://10.9.9.9:443/") == "network"


def test_decide_names_the_rule_in_its_403(tmp_path: Path):
    engine = make_engine(tmp_path, {"allowed_ips": ["127.0.0.1"]}, refusing_resolver([]))
    with pytest.raises(Reply) as caught:
        decide(engine, "https://[2606:4700::1111]:443/")
    reply = caught.value
    assert (reply.status, reply.rule) == (403, "network.allowed_ips")
    assert reply.message.startswith("denied by network.allowed_ips: ")


@pytest.mark.parametrize(
    ("target", "hint"),
    [("https://h/", "use CONNECT for https"), ("HTTPS://h/", "use CONNECT for https"), ("/path", "need http://...")],
)
def test_a_forwarded_target_that_is_not_absolute_http_says_what_to_do(target, hint):
    with pytest.raises(Reply) as caught:
        forward_url(target)
    assert (caught.value.status, caught.value.message) == (
        400,
        f"proxy: the request target must be an absolute http:// URL ({hint})",
    )
    assert forward_url("HTTP://h/x") == "HTTP://h/x"
