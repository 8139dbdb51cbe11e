"""hugind/policy/parse.py at its edges: a preset's host lists intersected with the manifest's,
rule by rule (ports, address families, which side's rule is kept).

Written against the survivors of a mutation run (bench/mutation.py policy.parse). No socket and
no DNS: only the policy is built.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hugind.errors import ManifestError
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


def test_the_same_wildcard_on_both_sides_is_kept(tmp_path):
    assert domains(tmp_path, ["*.example.com"], ["*.example.com"]) == [("*.example.com", None, "*.example.com")]


def test_a_preset_with_only_ips_restricts_the_hosts_and_keeps_no_domain(tmp_path):
    net = _net(tmp_path, {}, {"allowed_ips": ["10.0.0.0/8"]})
    assert net.restrict_hosts is True
    assert (net.allowed_domains, [r.spec for r in net.allowed_ips]) == ((), ["10.0.0.0/8"])
    both = _net(
        tmp_path, {"allowed_domains": ["a.com"], "allowed_ips": ["10.1.0.0/16"]}, {"allowed_ips": ["10.0.0.0/8"]}
    )
    assert (both.allowed_domains, [r.spec for r in both.allowed_ips]) == ((), ["10.1.0.0/16"])


def test_a_preset_with_only_domains_keeps_no_ip(tmp_path):
    net = _net(tmp_path, {}, {"allowed_domains": ["a.com"]})
    assert (net.allowed_ips, [r.spec for r in net.allowed_domains]) == ((), ["a.com"])
    both = _net(
        tmp_path, {"allowed_domains": ["a.com"], "allowed_ips": ["10.1.0.0/16"]}, {"allowed_domains": ["a.com"]}
    )
    assert (both.allowed_ips, [r.spec for r in both.allowed_domains]) == ((), ["a.com"])


def test_a_preset_can_turn_network_off_and_lower_the_redirects(tmp_path):
    net = _net(tmp_path, {"block_private_networks": False, "max_redirects": 5}, {"allow": False, "max_redirects": 2})
    assert (net.allow, net.max_redirects, net.block_private_networks) == (False, 2, False)
    kept = _net(tmp_path, {"block_private_networks": False, "max_redirects": 1}, {"timeout": 5})
    assert (kept.allow, kept.max_redirects, kept.block_private_networks, kept.timeout) == (True, 1, False, 5)


def _fs(root: Path, mine: dict | None, theirs: dict):
    preset = {"name": "p", "permissions": {"filesystem": theirs}}
    permissions = {"filesystem": mine} if mine is not None else None
    return build_policy(permissions, runtime_fs_mode="read-write", agent_root=root, preset=preset).fs


def test_a_presets_filesystem_caps_apply_without_a_manifest_section(tmp_path):
    fs = _fs(tmp_path, None, {"max_read_bytes": 10, "max_write_bytes": 20})
    assert (fs.max_read_bytes, fs.max_write_bytes, fs.read, fs.write) == (10, 20, (), ())
    lower = _fs(tmp_path, {"max_write_bytes": 1000}, {"max_write_bytes": 10})
    assert lower.max_write_bytes == 10


def test_a_presets_write_list_alone_narrows_only_the_writable_roots(tmp_path):
    fs = _fs(tmp_path, {"read": ["data"], "write": ["out", "tmp"]}, {"write": ["out"]})
    assert ([r.spec for r in fs.read], [r.spec for r in fs.write]) == (["data"], ["out"])


def test_a_root_the_preset_may_write_is_readable_under_it(tmp_path):
    fs = _fs(tmp_path, {"read": ["out", "data/x", "etc"], "write": ["out"]}, {"read": ["data"], "write": ["out"]})
    assert ([r.spec for r in fs.read], [r.spec for r in fs.write]) == (["out", "data/x"], ["out"])


def _error(root: Path, permissions: dict) -> str:
    with pytest.raises(ManifestError) as caught:
        build_policy(permissions, runtime_fs_mode=None, agent_root=root)
    return caught.value.message


def test_a_nul_in_a_list_entry_or_working_dir_is_refused_by_name(tmp_path):
    assert _error(tmp_path, {"filesystem": {"read": ["a\0b"]}}) == (
        "permissions.filesystem.read[0]: must be a non-empty string, got 'a\\x00b'"
    )
    assert _error(tmp_path, {"shell": {"allow": True, "working_dir": "a\0b"}}) == (
        "permissions.shell.working_dir: must be a path inside the agent root, got 'a\\x00b'"
    )
    assert _error(tmp_path, {"shell": {"allow": True, "working_dir": ""}}) == (
        "permissions.shell.working_dir: must be a path inside the agent root, got ''"
    )


def test_a_relative_working_dir_is_taken_inside_the_agent_root_not_the_cwd(tmp_path):
    (tmp_path / "sub").mkdir()
    shell = build_policy(
        {"shell": {"allow": True, "working_dir": "sub"}}, runtime_fs_mode=None, agent_root=tmp_path
    ).shell
    assert (shell.working_dir, shell.working_dir_spec) == (tmp_path / "sub", "sub")


def test_an_unknown_key_without_a_close_match_lists_the_known_ones(tmp_path):
    assert _error(tmp_path, {"shell": {"zzzzqqq": 1}}) == (
        "permissions.shell.zzzzqqq: unknown key (expected one of: allow, whitelist, blacklist, timeout, "
        "max_output, env_clear, working_dir, require_confinement)"
    )
