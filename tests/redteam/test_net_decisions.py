"""Network attacks decided by the policy engine alone: no socket is opened, no name is looked up.

Test traffic goes only to loopback. So every attack aimed at an address off this machine (the
metadata IP, RFC 1918 and CGNAT ranges, NAT64/6to4/compatible disguises, public names) is
asserted here, by calling ``PolicyEngine.check_connect`` with a scripted resolver in place of
DNS: if a rule broke, the test fails on the target it got back instead of sending a request.
``test_net_attacks.py`` replays through real JS agents only the vectors whose every possible
target is loopback; this file covers all of them, with the same rule and message fragment.

``PORT`` and ``OTHER`` stand for the loopback servers of the end-to-end tests: nothing listens
there and nothing connects.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import urljoin

import pytest

from hugind.errors import PermissionDenied
from hugind.policy import AuditLog, NetTarget, PolicyEngine, build_policy
from tests.policy.policy_vectors import NET_BAD_URLS, NET_BLOCKED, NET_POLICY
from tests.redteam.net_vectors import (
    ALLOWLIST_TRICKS,
    LOOPBACK_DISGUISES,
    MIXED_ANSWERS,
    REBINDING,
    REDIRECT_TARGETS,
    allowlist_policy,
)

PORT = 8080
OTHER = 8081


class ScriptedDns:
    """Stands in for DNS: each name has a list of lookups, played in turn (the last one repeats).

    Every lookup is recorded, so a test can assert that a denial came before any resolution.
    """

    def __init__(self, lookups: dict[str, Sequence[Sequence[str]]] | None = None) -> None:
        self._lookups = {name: [list(answers) for answers in seq] for name, seq in (lookups or {}).items()}
        self.asked: list[str] = []

    def __call__(self, host: str, port: int, timeout: float) -> list[str]:
        self.asked.append(host)
        script = self._lookups.get(host)
        if not script:
            # OSError is what the engine turns into a network.resolve denial, like a real NXDOMAIN.
            raise OSError(f"scripted DNS has no name {host}")
        turn = min(self.asked.count(host), len(script)) - 1
        return script[turn]


def localhost_dns() -> ScriptedDns:
    """What /etc/hosts says about localhost; any other name is unknown."""
    return ScriptedDns({"localhost": [["127.0.0.1", "::1"]]})


Decide = Callable[..., PolicyEngine]


@pytest.fixture
def engine_for(tmp_path: Path) -> Decide:
    """``engine_for(permissions, dns, strict=False)``: a fresh engine with an in-memory audit log."""

    def make(permissions: dict | None, dns: ScriptedDns, *, strict: bool = False) -> PolicyEngine:
        policy = build_policy(permissions, runtime_fs_mode=None, agent_root=tmp_path, strict=strict)
        return PolicyEngine(policy, AuditLog(), resolver=dns)

    return make


def assert_refused(engine: PolicyEngine, url: str, rule: str, fragment: str) -> PermissionDenied:
    """``url`` is denied naming ``fragment``, and the last audit entry is that denial by ``rule``."""
    before = engine.denials
    with pytest.raises(PermissionDenied) as info:
        target = engine.check_connect(url)
        pytest.fail(f"{url} was allowed: would connect to {target.addresses}")
    message = info.value.message
    assert message.startswith("network: ") and fragment in message, message
    entry = engine.audit.entries[-1]
    assert (entry["capability"], entry["op"], entry["decision"], entry["rule"]) == ("network", "connect", "deny", rule)
    assert entry["request"]["url"] == url
    assert engine.denials == before + 1
    return info.value


def assert_allowed(engine: PolicyEngine, url: str, rule: str) -> NetTarget:
    target = engine.check_connect(url)
    entry = engine.audit.entries[-1]
    assert (entry["decision"], entry["rule"]) == ("allow", rule)
    assert entry["request"]["addresses"] == list(target.addresses)
    return target


def only_port(port: int = PORT, **net: object) -> dict:
    """The policy of the end-to-end tests: exactly one loopback server, host and port."""
    return {"network": {"allow": True, "allowed_ips": [f"127.0.0.1:{port}"], "timeout": 10, **net}}


# --- the block list, in every spelling ------------------------------------------------------


@pytest.mark.parametrize(("url", "rule", "fragment"), NET_BLOCKED, ids=[v[0] for v in NET_BLOCKED])
def test_blocked_address_forms(engine_for, url, rule, fragment):
    dns = localhost_dns()
    assert_refused(engine_for(NET_POLICY, dns), url, rule, fragment)
    assert set(dns.asked) <= {"localhost"}  # only a name is ever resolved, never a literal


@pytest.mark.parametrize(("url", "fragment"), NET_BAD_URLS, ids=[v[0] for v in NET_BAD_URLS])
def test_bad_urls_and_schemes(engine_for, url, fragment):
    dns = localhost_dns()
    assert_refused(engine_for(NET_POLICY, dns), url, "network.url", fragment)
    assert dns.asked == []  # refused while parsing: no host was ever looked at


@pytest.mark.parametrize(("host", "rule", "fragment"), LOOPBACK_DISGUISES, ids=[v[0] for v in LOOPBACK_DISGUISES])
def test_loopback_in_disguise_on_a_server_port(engine_for, host, rule, fragment):
    assert_refused(engine_for(NET_POLICY, localhost_dns()), f"http://{host}:{PORT}/hello", rule, fragment)


def test_metadata_ip_needs_naming_even_when_private_networks_are_allowed(engine_for):
    perms = {"network": {"allow": True, "allowed_domains": ["svc.test"], "block_private_networks": False}}
    dns = ScriptedDns()
    engine = engine_for(perms, dns)
    url = "http://169.254.169.254/latest/meta-data/iam/"
    assert_refused(engine, url, "network.allowed_ips", "address 169.254.169.254 port 80 is not in allowed_ips")
    assert dns.asked == []


def test_named_loopback_port_does_not_open_other_ports(engine_for):
    engine = engine_for(only_port(), ScriptedDns())
    url = f"http://127.0.0.1:{OTHER}/hello"
    assert_refused(engine, url, "network.allowed_ips", f"address 127.0.0.1 port {OTHER} is not in allowed_ips")
    assert assert_allowed(engine, f"http://127.0.0.1:{PORT}/hello", "network.allowed_ips").addresses == ("127.0.0.1",)


@pytest.mark.parametrize("url", [f"http://127.0.0.1:{PORT}/", "http://169.254.169.254/", "http://10.1.2.3/"])
def test_broad_allowed_ips_entry_does_not_exempt_private_ranges(engine_for, url):
    engine = engine_for({"network": {"allow": True, "allowed_ips": ["0.0.0.0/0"]}}, ScriptedDns())
    assert_refused(engine, url, "network.block_private_networks", "in blocked range")


# --- redirects: the next hop is checked like a first request -----------------------------------


@pytest.mark.parametrize(
    ("location", "rule", "fragment"),
    [v[1:] for v in REDIRECT_TARGETS],
    ids=[v[0] for v in REDIRECT_TARGETS],
)
def test_redirect_target_is_checked_before_the_next_hop(engine_for, location, rule, fragment):
    fill = {"port": PORT, "other": OTHER}
    dns = localhost_dns()
    engine = engine_for(only_port(), dns)
    first = assert_allowed(engine, f"http://127.0.0.1:{PORT}/redirect/0", "network.allowed_ips")
    # The fetch capability resolves a Location against the URL it just fetched (urljoin): the same here.
    assert_refused(engine, urljoin(first.url, location.format(**fill)), rule, fragment.format(**fill))
    assert [e["decision"] for e in engine.audit.entries] == ["allow", "deny"]
    assert dns.asked == []  # a name outside allowed_domains is never resolved


# --- allow-list parsing tricks and DNS answers ---------------------------------------------------


@pytest.mark.parametrize(
    ("url", "rule", "fragment"),
    [v[1:] for v in ALLOWLIST_TRICKS],
    ids=[v[0] for v in ALLOWLIST_TRICKS],
)
def test_allowlist_parsing_tricks(engine_for, url, rule, fragment):
    dns = ScriptedDns({"svc.test": [["127.0.0.1"]]})
    assert_refused(engine_for(allowlist_policy(PORT), dns), url.format(port=PORT), rule, fragment)
    assert dns.asked == []


@pytest.mark.parametrize("name", sorted(REBINDING))
def test_rebinding_each_lookup_is_judged_and_the_first_is_pinned(engine_for, name):
    script = REBINDING[name]
    dns = ScriptedDns({"svc.test": [answers for answers, _ in script]})
    engine = engine_for(allowlist_policy(PORT), dns)
    url = f"http://SVC.Test.:{PORT}/echo"
    target = assert_allowed(engine, url, "network.allowed_domains")
    # One lookup, and the connection is pinned to its answer; the guest's name stays the Host.
    assert dns.asked == ["svc.test"]
    assert (target.host, target.addresses, target.host_header) == ("svc.test", ("127.0.0.1",), f"svc.test:{PORT}")
    for turn, (_, fragment) in enumerate(script[1:], start=2):
        # A later request resolves again and gets the rebound answer: refused on its own merits.
        assert_refused(engine, url, "network.block_private_networks", fragment)
        assert dns.asked == ["svc.test"] * turn


@pytest.mark.parametrize(
    ("answers", "fragment"),
    [v[1:] for v in MIXED_ANSWERS],
    ids=[v[0] for v in MIXED_ANSWERS],
)
def test_a_name_with_any_blocked_answer_is_denied(engine_for, answers, fragment):
    perms = {
        "network": {"allow": True, "allowed_domains": [f"mixed.test:{PORT}"], "allowed_ips": [f"127.0.0.1:{PORT}"]}
    }
    dns = ScriptedDns({"mixed.test": [answers]})
    assert_refused(
        engine_for(perms, dns), f"http://mixed.test:{PORT}/hello", "network.block_private_networks", fragment
    )
    assert dns.asked == ["mixed.test"]


@pytest.mark.parametrize(
    ("name", "address", "fragment"),
    [
        ("127.0.0.1.nip.io", "127.0.0.1", "127.0.0.0/8 (loopback)"),
        ("169.254.169.254.nip.io", "169.254.169.254", "169.254.0.0/16 (link-local/metadata)"),
        ("10.0.0.1.nip.io", "10.0.0.1", "10.0.0.0/8"),
    ],
)
def test_public_name_resolving_to_a_blocked_address_is_blocked_like_the_address(engine_for, name, address, fragment):
    dns = ScriptedDns({name: [[address]]})
    url = f"http://{name}:{PORT}/hello"
    err = assert_refused(engine_for(NET_POLICY, dns), url, "network.block_private_networks", fragment)
    assert f"host {name} resolves to {address}, which is in blocked range" in err.message
    assert dns.asked == [name]


# --- --strict and the audit log -------------------------------------------------------------------


def test_strict_without_host_lists_refuses_every_name_before_resolving(engine_for):
    dns = ScriptedDns({"svc.test": [["127.0.0.1"]]})
    engine = engine_for({"network": {"allow": True}}, dns, strict=True)
    url = f"http://svc.test:{PORT}/hello"
    err = assert_refused(engine, url, "network.allowed_domains", "is not in allowed_domains")
    assert err.message == f"network: host svc.test port {PORT} is not in allowed_domains"
    assert dns.asked == []


def test_strict_audit_records_the_metadata_denial(engine_for, tmp_path):
    log = tmp_path / "audit.jsonl"
    policy = build_policy(only_port(), runtime_fs_mode=None, agent_root=tmp_path, strict=True)
    with AuditLog(log) as audit:
        engine = PolicyEngine(policy, audit, resolver=ScriptedDns())
        assert_allowed(engine, f"http://127.0.0.1:{PORT}/hello", "network.allowed_ips")
        url = "http://169.254.169.254/latest/meta-data/"
        assert_refused(engine, url, "network.block_private_networks", "169.254.0.0/16 (link-local/metadata)")
    lines = log.read_text().splitlines()
    assert [(e["capability"], e["op"], e["decision"], e["rule"]) for e in map(json.loads, lines)] == [
        ("network", "connect", "allow", "network.allowed_ips"),
        ("network", "connect", "deny", "network.block_private_networks"),
    ]
