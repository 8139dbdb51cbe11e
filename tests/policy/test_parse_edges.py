"""hugind/policy/parse.py at its edges: a preset's host lists intersected with the manifest's,
rule by rule (ports, address families, which side's rule is kept).

Written against the survivors of a mutation run (bench/mutation.py policy.parse). No socket and
no DNS: only the policy is built.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hugind.policy import build_policy


def _net(root: Path, mine: dict, theirs: dict):
    preset = {"name": "p", "permissions": {"network": theirs}}
    permissions = {"network": {"allow": True, **mine}}
    return build_policy(permissions, runtime_fs_mode=None, agent_root=root, preset=preset).net


def ips(root: Path, mine: list[str], theirs: list[str]) -> list[tuple[str, int | None, str]]:
    net = _net(root, {"allowed_ips": mine}, {"allowed_ips": theirs})
    return [(str(r.network), r.port, r.spec) for r in net.allowed_ips]


def domains(root: Path, mine: list[str], theirs: list[str]) -> list[tuple[str, int | None, str]]:
    net = _net(root, {"allowed_domains": mine}, {"allowed_domains": theirs})
    return [(r.pattern, r.port, r.spec) for r in net.allowed_domains]


@pytest.mark.parametrize(
    ("mine", "theirs", "expected"),
    [
        # The narrower rule is kept, with the port either side names.
        (["10.0.0.0/8"], ["10.1.0.0/16:443"], [("10.1.0.0/16", 443, "10.1.0.0/16:443")]),
        (["10.1.2.0/24:80"], ["10.0.0.0/8"], [("10.1.2.0/24", 80, "10.1.2.0/24:80")]),
        (["10.0.0.0/8:80"], ["10.0.0.0/8:80"], [("10.0.0.0/8", 80, "10.0.0.0/8:80")]),
        # Two different ports: nothing in common.
        (["10.0.0.0/8:80"], ["10.0.0.0/8:443"], []),
        # A conflicting rule does not end the search: the next one still matches.
        (["10.1.0.0/16:80"], ["10.0.0.0/8:443", "10.0.0.0/8:80"], [("10.1.0.0/16", 80, "10.1.0.0/16:80")]),
        # Families never meet; each address meets its own.
        (["10.0.0.0/8", "::1"], ["[::/0]:443"], [("::1/128", 443, "::1")]),
        # Disjoint ranges: nothing.
        (["10.0.0.0/8"], ["192.168.0.0/16"], []),
    ],
)
def test_a_presets_ip_rules_intersect_rule_by_rule(tmp_path, mine, theirs, expected):
    assert ips(tmp_path, mine, theirs) == expected


@pytest.mark.parametrize(
    ("mine", "theirs", "expected"),
    [
        (["*.example.com"], ["api.example.com:443"], [("api.example.com", 443, "api.example.com:443")]),
        (["api.example.com:80"], ["*.example.com"], [("api.example.com", 80, "api.example.com:80")]),
        (["*.example.com"], ["*.a.example.com"], [("*.a.example.com", None, "*.a.example.com")]),
        (["a.com:80"], ["a.com:443"], []),
        (["a.com:80"], ["a.com:443", "a.com"], [("a.com", 80, "a.com:80")]),
        # A wildcard covers subdomains only, never the bare name or a longer label.
        (["*.example.com"], ["example.com"], []),
        (["*.example.com"], ["xexample.com"], []),
    ],
)
def test_a_presets_domain_rules_intersect_rule_by_rule(tmp_path, mine, theirs, expected):
    assert domains(tmp_path, mine, theirs) == expected
