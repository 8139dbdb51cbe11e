"""hugind/policy/parse.py: every number's limits at their boundary, the exact messages of a
refused value, and what a preset or ``--strict`` makes of each key when the other side is silent.

Written against the survivors of a mutation run (bench/mutation.py policy.parse). Only the
policy is built: no socket, no DNS, no child.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hugind.errors import ManifestError
from hugind.policy import build_policy, load_preset
from hugind.policy.parse import parse_permissions


def parsed(root: Path, section: str, key: str, value: object) -> object:
    return parse_permissions({section: {key: value}}, "permissions", root)[section][key]


def refusal(root: Path, section: str, key: str, value: object) -> str:
    with pytest.raises(ManifestError) as caught:
        parse_permissions({section: {key: value}}, "permissions", root)
    return caught.value.message


# (section, key, lowest refused, lowest accepted, highest accepted, lowest refused above)
SECONDS = [
    ("network", "timeout", 0, 0.001, 3600, 3600.5),
    ("shell", "timeout", 0, 0.001, 86400, 86400.001),
    ("limits", "timeout", 0, 0.001, 604800, 604801),
    ("mcp", "timeout", 0, 0.001, 86400, 86401),
]


@pytest.mark.parametrize(("section", "key", "below", "low", "high", "above"), SECONDS)
def test_seconds_are_open_at_zero_closed_at_the_cap_and_come_back_as_floats(
    tmp_path, section, key, below, low, high, above
):
    for accepted in (low, high):
        value = parsed(tmp_path, section, key, accepted)
        assert value == accepted and type(value) is float
    for refused in (below, above, -1):
        assert refusal(tmp_path, section, key, refused) == (
            f"permissions.{section}.{key}: must be a number of seconds in (0, {high:g}], got {refused!r}"
        )


@pytest.mark.parametrize("value", [True, False, "5", [1]])
def test_seconds_must_be_a_number_not_a_flag_or_text(tmp_path, value):
    assert refusal(tmp_path, "network", "timeout", value) == (
        f"permissions.network.timeout: must be a number of seconds in (0, 3600], got {value!r}"
    )


INTEGERS = [
    ("filesystem", "max_read_bytes", 1, 1 << 40),
    ("filesystem", "max_write_bytes", 1, 1 << 40),
    ("network", "max_response_bytes", 1, 1 << 40),
    ("network", "max_redirects", 0, 5),
    ("shell", "max_output", 1, 1 << 40),
    ("limits", "memory_mb", 1, 65536),
    ("limits", "fuel", 1, 1 << 62),
    ("limits", "max_output_bytes", 1, 1 << 40),
]


@pytest.mark.parametrize(("section", "key", "low", "high"), INTEGERS)
def test_integers_are_closed_at_both_ends(tmp_path, section, key, low, high):
    for accepted in (low, high):
        value = parsed(tmp_path, section, key, accepted)
        assert value == accepted and type(value) is int
    for refused in (low - 1, high + 1, float(low), True):
        assert refusal(tmp_path, section, key, refused) == (
            f"permissions.{section}.{key}: must be an integer in [{low}, {high}], got {refused!r}"
        )


def test_a_bad_host_rule_names_its_index_its_text_and_the_reason(tmp_path):
    message = refusal(tmp_path, "network", "allowed_ips", ["10.0.0.0/8", "10.0.0.0/33"])
    assert message.startswith("permissions.network.allowed_ips[1]: invalid entry '10.0.0.0/33': ")
    assert len(message) > len("permissions.network.allowed_ips[1]: invalid entry '10.0.0.0/33': ")
    message = refusal(tmp_path, "network", "allowed_domains", ["a.com", "b.com", "exa mple.com"])
    assert message.startswith("permissions.network.allowed_domains[2]: invalid entry 'exa mple.com': ")


def test_host_rules_and_mcp_names_come_back_in_order_as_tuples(tmp_path):
    ips = parsed(tmp_path, "network", "allowed_ips", ["10.0.0.0/8", "::1"])
    assert [(str(r.network), r.spec) for r in ips] == [("10.0.0.0/8", "10.0.0.0/8"), ("::1/128", "::1")]
    domains = parsed(tmp_path, "network", "allowed_domains", ["b.example.com", "*.a.example.com:443"])
    assert [(r.pattern, r.port) for r in domains] == [("b.example.com", None), ("*.a.example.com", 443)]
    assert parsed(tmp_path, "mcp", "servers", ["files", "search"]) == ("files", "search")
    assert parsed(tmp_path, "mcp", "tools", ["files.read"]) == ("files.read",)
    assert (
        refusal(tmp_path, "mcp", "tools", ["ok", ""]) == "permissions.mcp.tools[1]: must be a non-empty string, got ''"
    )


def test_a_policy_built_from_bounded_values_carries_them(tmp_path):
    policy = build_policy(
        {
            "network": {"allow": True, "timeout": 1, "max_redirects": 0, "max_response_bytes": 7},
            "limits": {"timeout": 2, "memory_mb": 3, "fuel": 4, "max_output_bytes": 5},
        },
        runtime_fs_mode=None,
        agent_root=tmp_path,
    )
    assert (policy.net.timeout, policy.net.max_redirects, policy.net.max_response_bytes) == (1.0, 0, 7)
    limits = policy.limits
    assert (limits.timeout, limits.memory_mb, limits.fuel, limits.max_output_bytes) == (2.0, 3, 4, 5)


# --- a section one side leaves out ----------------------------------------------------------


def build(root: Path, permissions: dict | None = None, *, mode: str | None = None, **kw):
    return build_policy(permissions, runtime_fs_mode=mode, agent_root=root, **kw)


def preset_of(**sections: dict) -> dict:
    return {"name": "p", "permissions": sections}


def test_filesystem_caps_apply_in_mode_none_with_or_without_a_preset(tmp_path):
    # No read or write root: the mode is "none", but the caps given are still the policy's.
    fs = build(tmp_path, {"filesystem": {"max_read_bytes": 10}}).fs
    assert (fs.mode, fs.max_read_bytes) == ("none", 10)
    fs = build(tmp_path, preset=preset_of(filesystem={"max_write_bytes": 20})).fs
    assert (fs.mode, fs.max_write_bytes) == ("none", 20)


def test_a_write_root_alone_makes_the_mode_read_write(tmp_path):
    fs = build(tmp_path, {"filesystem": {"write": ["out"]}}).fs
    assert (fs.mode, [r.spec for r in fs.write]) == ("read-write", ["out"])


def test_a_presets_network_caps_apply_when_the_manifest_has_no_network_section(tmp_path):
    net = build(tmp_path, preset=preset_of(network={"timeout": 5, "max_redirects": 1})).net
    assert (net.allow, net.timeout, net.max_redirects) == (False, 5.0, 1)


def test_a_presets_shell_caps_apply_when_the_manifest_has_no_shell_section(tmp_path):
    shell = build(tmp_path, preset=preset_of(shell={"timeout": 5, "max_output": 100})).shell
    assert (shell.allow, shell.timeout, shell.max_output) == (False, 5.0, 100)


def test_strict_without_network_or_shell_sections_restricts_hosts_and_requires_confinement(tmp_path):
    policy = build(tmp_path, strict=True)
    assert policy.net.restrict_hosts is True
    assert policy.net.block_private_networks is True
    assert policy.shell.require_confinement is True
    # With sections present, --strict still requires confinement the manifest did not ask for.
    shell = build(tmp_path, {"shell": {"allow": True, "require_confinement": False}}, strict=True).shell
    assert shell.require_confinement is True


@pytest.mark.parametrize(
    ("mine", "theirs", "expected"),
    [
        ({}, None, False),
        ({"allow": True}, None, False),
        ({"require_confinement": True}, None, True),
        ({"require_confinement": False}, {"require_confinement": True}, True),
        ({"require_confinement": True}, {"require_confinement": False}, True),
        # A preset's shell section that says nothing of it leaves the manifest's choice.
        ({"allow": True}, {"timeout": 5}, False),
    ],
)
def test_require_confinement_is_on_when_either_side_asks_for_it(tmp_path, mine, theirs, expected):
    preset = preset_of(shell=theirs) if theirs is not None else None
    shell = build(tmp_path, {"shell": mine}, preset=preset).shell
    assert shell.require_confinement is expected


def test_the_manifest_may_keep_the_environment_unless_the_preset_clears_it(tmp_path):
    assert build(tmp_path, {"shell": {"allow": True}}).shell.env_clear is True
    assert build(tmp_path, {"shell": {"allow": True, "env_clear": False}}).shell.env_clear is False
    kept = build(tmp_path, {"shell": {"env_clear": False}}, preset=preset_of(shell={"timeout": 5})).shell
    assert kept.env_clear is False
    cleared = build(tmp_path, {"shell": {"env_clear": False}}, preset=preset_of(shell={"env_clear": True})).shell
    assert cleared.env_clear is True


def test_the_shells_output_cap_is_the_manifests_lowered_to_the_presets(tmp_path):
    assert build(tmp_path, {"shell": {"max_output": 100}}).shell.max_output == 100
    lowered = build(tmp_path, {"shell": {"max_output": 100}}, preset=preset_of(shell={"max_output": 40})).shell
    assert lowered.max_output == 40
    kept = build(tmp_path, {"shell": {"max_output": 30}}, preset=preset_of(shell={"max_output": 40})).shell
    assert kept.max_output == 30


# --- whitelists: names and paths --------------------------------------------------------------


def test_a_whitelist_takes_program_names_and_absolute_paths_only(tmp_path):
    assert parsed(tmp_path, "shell", "whitelist", ["ls", "/usr/bin/env"]) == ("ls", "/usr/bin/env")
    assert refusal(tmp_path, "shell", "blacklist", ["curl", "bin/wget"]) == (
        "permissions.shell.blacklist[1]: must be a program name or an absolute path, got 'bin/wget'"
    )
    assert refusal(tmp_path, "shell", "whitelist", "ls") == "permissions.shell.whitelist: must be a list, got str"


def test_a_presets_whitelist_is_the_whitelist_when_the_manifest_has_none(tmp_path):
    shell = build(tmp_path, {"shell": {"allow": True}}, preset=preset_of(shell={"whitelist": ["ls", "cat"]})).shell
    assert shell.whitelist == ("ls", "cat")


@pytest.fixture
def tool(tmp_path) -> tuple[str, str]:
    """An executable and a symlink to it: two spellings of one program."""
    real = tmp_path / "bin" / "tool"
    real.parent.mkdir()
    real.write_text("#!/bin/sh\n")
    real.chmod(0o755)
    link = tmp_path / "bin" / "tool-link"
    link.symlink_to(real)
    return str(real), str(link)


def _whitelist(root: Path, mine: list[str], theirs: list[str]) -> tuple[str, ...] | None:
    preset = preset_of(shell={"whitelist": theirs})
    return build(root, {"shell": {"allow": True, "whitelist": mine}}, preset=preset).shell.whitelist


def test_a_program_the_preset_names_by_another_path_is_kept_as_the_manifest_spells_it(tmp_path, tool):
    real, link = tool
    assert _whitelist(tmp_path, [real, "cat"], [link]) == (real,)
    assert _whitelist(tmp_path, [link, "cat"], [real]) == (link,)
    # A program the preset does not list, in any spelling, is dropped.
    assert _whitelist(tmp_path, [real], ["cat"]) == ()


def test_a_program_found_on_no_path_is_matched_by_its_name(tmp_path):
    absent = "hugind-no-such-program"
    assert _whitelist(tmp_path, [absent, "other-absent"], [absent]) == (absent,)
    assert _whitelist(tmp_path, [absent], [f"/nonexistent/{absent}"]) == ()


# --- the preset itself ------------------------------------------------------------------------


def test_a_policy_without_a_preset_names_none_and_an_unnamed_preset_is_called_preset(tmp_path):
    assert build(tmp_path).preset is None
    assert build(tmp_path, preset={"permissions": {}}).preset == "preset"
    assert build(tmp_path, preset={"name": "ci"}).preset == "ci"


def test_a_preset_that_is_not_a_mapping_is_refused_by_name(tmp_path):
    with pytest.raises(ManifestError) as caught:
        build(tmp_path, preset=["strict"])  # type: ignore[arg-type]
    assert caught.value.message == "preset: must be a mapping, got list"


def _load_error(path: Path) -> str:
    with pytest.raises(ManifestError) as caught:
        load_preset(path)
    return caught.value.message


def test_a_preset_files_errors_name_the_file(tmp_path):
    path = tmp_path / "team.yaml"
    path.write_bytes(b"name: \xff\n")
    assert _load_error(path) == f"{path}: the preset is not valid UTF-8"
    path.write_text("- a list\n")
    assert _load_error(path) == f"{path}: a preset must be a mapping"
    path.write_text("permissions: [unclosed")
    assert _load_error(path).startswith(f"{path}: invalid YAML at line 1")


def test_a_preset_file_without_a_name_is_named_after_the_file(tmp_path):
    path = tmp_path / "team-ci.yaml"
    path.write_text("permissions:\n  shell:\n    timeout: 5\n")
    assert load_preset(path) == {"permissions": {"shell": {"timeout": 5}}, "name": "team-ci"}
    assert build(tmp_path, preset=load_preset(path)).preset == "team-ci"
    path.write_text("name: chosen\n")
    assert load_preset(path)["name"] == "chosen"
