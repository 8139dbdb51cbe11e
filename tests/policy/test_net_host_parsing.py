"""Host, address and allow-list parsing of the network policy, exactly: the limits and the
messages of ``hugind/policy/net.py`` (each test here killed a mutant of it that survived the
suite: bench/mutation.py, bench/README.md)."""

from __future__ import annotations

import ipaddress

import pytest

from hugind.policy.model import Denied
from hugind.policy.net import embedded_ipv4, parse_domain_rule, parse_host, parse_inet_aton, parse_ip_rule, parse_url


def test_inet_aton_reads_an_empty_hex_part_as_zero():
    assert parse_inet_aton("0x") == ipaddress.IPv4Address("0.0.0.0")
    assert parse_inet_aton("127.0x") == ipaddress.IPv4Address("127.0.0.0")


def test_a_name_ending_in_a_non_hex_0x_label_stays_a_name():
    assert parse_host("host.0xx") == "host.0xx"  # 'x' after '0x' is not a hex digit: not numeric


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://./", "network: invalid host in URL 'http://./': empty host name"),
        ("http://a!b/", "network: invalid host in URL 'http://a!b/': invalid character in host name 'a!b'"),
        (
            "http://" + "é" * 64 + "/",
            f"network: invalid host in URL 'http://{'é' * 64}/': invalid international host name '{'é' * 64}'",
        ),
    ],
    ids=["empty", "bad-character", "bad-idna"],
)
def test_invalid_host_messages_name_the_cause(url, message):
    with pytest.raises(Denied) as info:
        parse_url(url)
    assert (info.value.rule, info.value.message) == ("network.url", message)


def test_host_name_length_limit_is_253():
    name = ".".join(["a" * 63, "b" * 63, "c" * 63, "d" * 61])
    assert len(name) == 253 and parse_host(name) == name
    with pytest.raises(ValueError, match="invalid host name"):
        parse_host(name + "d")


def test_a_label_may_use_every_name_character():
    label = "abcdefghijklmnopqrstuvwxyz0123456789-_"
    assert parse_host(f"{label}.test") == f"{label}.test"


def test_an_ip_in_allowed_domains_is_refused_with_the_reason():
    with pytest.raises(ValueError) as info:
        parse_domain_rule("10.0.0.1")
    assert str(info.value) == "an IP address belongs in allowed_ips"


def test_ip_rules_keep_their_spec_and_accept_host_bits():
    rule = parse_ip_rule("10.1.2.3/8:443")
    assert (rule.network, rule.port, rule.spec) == (ipaddress.ip_network("10.0.0.0/8"), 443, "10.1.2.3/8:443")


def test_the_normalized_url_brackets_ipv6_and_drops_the_default_port():
    assert parse_url("http://[::1]/x").normalized() == "http://[::1]/x"
    assert parse_url("http://A.test:80/").normalized() == "http://a.test/"
    assert parse_url("https://a.test:80/").normalized() == "https://a.test:80/"


def test_ipv4_compatible_forms_from_2_up_carry_an_address():
    assert embedded_ipv4(ipaddress.IPv6Address("::2")) == (ipaddress.IPv4Address("0.0.0.2"), "IPv4-compatible")
    assert embedded_ipv4(ipaddress.IPv6Address("::1")) is None  # loopback, not a carried 0.0.0.1


def test_a_0x_label_is_numeric_only_when_all_after_0x_is_hex():
    assert parse_host("a.0xg1") == "a.0xg1"


@pytest.mark.parametrize(
    ("host", "address"),
    [("1.16777215", "1.255.255.255"), ("1.2.65535", "1.2.255.255"), ("1.2.3.255", "1.2.3.255")],
)
def test_inet_aton_tail_limits_are_exact(host, address):
    assert parse_inet_aton(host) == ipaddress.IPv4Address(address)
    bigger = host.rsplit(".", 1)[0] + "." + str(int(host.rsplit(".", 1)[1]) + 1)
    with pytest.raises(ValueError) as info:
        parse_inet_aton(bigger)
    assert str(info.value) == bigger


@pytest.mark.parametrize("host", ["1.2.3.4.0", "1..2", "1.08", "256.1.1.1"])
def test_malformed_numeric_hosts_are_refused_naming_the_host(host):
    with pytest.raises(ValueError) as info:
        parse_inet_aton(host)
    assert str(info.value) == host
    with pytest.raises(Denied) as denied:
        parse_url(f"http://{host}/")
    assert denied.value.message == f"network: invalid host in URL 'http://{host}/': {host}"


def test_ipv6_zone_identifiers_are_refused_by_name():
    with pytest.raises(ValueError) as info:
        parse_host("fe80::1%eth0")
    assert str(info.value) == "IPv6 zone identifiers are not accepted: 'fe80::1%eth0'"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("[::1", "unclosed '['"),
        ("[::1]]:80", "junk after ']'"),
        ("[::1]x", "junk after ']'"),
        ("10.0.0.1:65536", "invalid port '65536'"),
        ("10.0.0.1:0", "invalid port '0'"),
    ],
)
def test_ip_rule_syntax_errors_name_the_cause(spec, message):
    with pytest.raises(ValueError) as info:
        parse_ip_rule(spec)
    assert str(info.value) == message


def test_the_highest_port_is_accepted():
    assert parse_ip_rule("10.0.0.1:65535").port == 65535


def test_a_capital_x_after_0x_is_not_a_hex_digit():
    assert parse_host("host.0xX") == "host.0xx"
