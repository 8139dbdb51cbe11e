"""Building the policy: defaults, validation with exact key paths, --strict, and presets that only tighten."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hugind.errors import ExitCode, ManifestError
from hugind.policy import Limits, Policy, PolicyEngine, build_policy, load_preset
from hugind.policy.parse import STRICT_DEFAULT_FUEL
from tests.support.dns import hosts_file_resolver

REPO = Path(__file__).resolve().parents[2]
PRESETS = {name: REPO / "policy" / f"{name}.yaml" for name in ("strict", "ci", "dev")}


def build(root: Path, permissions=None, mode=None, **kw) -> Policy:
    return build_policy(permissions, runtime_fs_mode=mode, agent_root=root, **kw)


def error(root: Path, permissions=None, mode=None, **kw) -> str:
    with pytest.raises(ManifestError) as info:
        build(root, permissions, mode, **kw)
    assert info.value.exit_code == ExitCode.USAGE
    return info.value.message


def test_no_permissions_allow_nothing(agent_root):
    policy = build(agent_root)
    assert policy.fs.mode == "none" and policy.fs.read == () and policy.fs.write == ()
    assert not policy.net.allow and policy.net.block_private_networks
    assert not policy.shell.allow and policy.shell.env_clear and policy.shell.whitelist is None
    assert policy.limits == Limits(timeout=300.0, memory_mb=512, fuel=None, max_output_bytes=10 * 1024 * 1024)
    assert policy.agent_root == agent_root.resolve()


def test_defaults_of_each_section(agent_root):
    policy = build(agent_root, {"network": {"allow": True}, "shell": {"allow": True}})
    assert (policy.net.timeout, policy.net.max_response_bytes, policy.net.max_redirects) == (
        30.0,
        10 << 20,
        5,
    )
    assert not policy.net.restrict_hosts
    assert (policy.shell.timeout, policy.shell.max_output, policy.shell.working_dir) == (60.0, 1 << 20, None)


@pytest.mark.parametrize(
    ("permissions", "mode", "expected"),
    [
        (None, None, "none"),
        ({"filesystem": {}}, None, "none"),
        ({"filesystem": {"read": ["."]}}, None, "read-write"),
        ({"filesystem": {"read": ["."]}}, "read-only", "read-only"),
        ({"filesystem": {"write": ["out"]}}, "scratch", "scratch"),
        (None, "read-write", "read-write"),
    ],
)
def test_runtime_fs_mode(agent_root, permissions, mode, expected):
    assert build(agent_root, permissions, mode).fs.mode == expected


def test_roots_are_resolved_relative_to_the_agent_root(agent_root, tmp_path):
    (agent_root / "real").mkdir()
    (agent_root / "alias").symlink_to(agent_root / "real")
    policy = build(agent_root, {"filesystem": {"read": ["alias", str(tmp_path)], "write": ["out/"]}})
    assert [r.path for r in policy.fs.read] == [agent_root / "real", tmp_path]
    assert [r.spec for r in policy.fs.read] == ["alias", str(tmp_path)]
    assert policy.fs.write[0].path == agent_root / "out"


@pytest.mark.parametrize(
    ("permissions", "fragment"),
    [
        (
            {"network": {"alowed_domains": []}},
            "permissions.network.alowed_domains: unknown key; did you mean 'allowed_domains'?",
        ),
        ({"netwrok": {}}, "permissions.netwrok: unknown key; did you mean 'network'?"),
        ({"shell": {"whitlist": ["ls"]}}, "permissions.shell.whitlist: unknown key"),
        ({"filesystem": {"read": "data"}}, "permissions.filesystem.read: must be a list, got str"),
        (
            {"filesystem": {"read": ["ok", 3]}},
            "permissions.filesystem.read[1]: must be a non-empty string, got 3",
        ),
        ({"filesystem": {"write": ["~/x"]}}, "permissions.filesystem.write[0]: '~' is not expanded"),
        ({"network": {"allow": "yes"}}, "permissions.network.allow: must be true or false, got str"),
        ({"network": {"timeout": -1}}, "permissions.network.timeout: must be a number of seconds"),
        ({"network": {"timeout": True}}, "permissions.network.timeout: must be a number"),
        (
            {"network": {"max_response_bytes": 1.5}},
            "permissions.network.max_response_bytes: must be an integer",
        ),
        (
            {"network": {"max_redirects": 6}},
            "permissions.network.max_redirects: must be an integer in [0, 5]",
        ),
        (
            {"network": {"allowed_ips": ["10.0.0.0/8", "nonsense"]}},
            "permissions.network.allowed_ips[1]: invalid entry",
        ),
        (
            {"network": {"allowed_domains": ["*"]}},
            "permissions.network.allowed_domains[0]: invalid entry '*'",
        ),
        ({"network": {"allowed_domains": ["1.2.3.4"]}}, "belongs in allowed_ips"),
        (
            {"shell": {"whitelist": ["bin/ls"]}},
            "permissions.shell.whitelist[0]: must be a program name or an absolute",
        ),
        (
            {"shell": {"working_dir": "../elsewhere"}},
            "permissions.shell.working_dir: must be inside the agent root",
        ),
        ({"shell": {"working_dir": "/"}}, "permissions.shell.working_dir: must be inside the agent root"),
        ({"limits": {"memory_mb": 0}}, "permissions.limits.memory_mb: must be an integer in [1, 65536]"),
        ({"limits": {"fuel": "lots"}}, "permissions.limits.fuel: must be an integer"),
        ({"limits": []}, "permissions.limits: must be a mapping, got list"),
    ],
)
def test_bad_manifests_name_the_exact_key(agent_root, permissions, fragment):
    assert fragment in error(agent_root, permissions)


def test_bad_top_level_values(agent_root):
    assert "permissions: must be a mapping, got list" in error(agent_root, ["network"])
    assert "runtime_fs_mode: must be one of none, read-only, scratch, read-write" in error(agent_root, None, "rw")


def test_null_values_mean_the_default(agent_root):
    policy = build(agent_root, {"network": {"allow": True, "timeout": None}, "limits": {"fuel": None}})
    assert policy.net.timeout == 30.0 and policy.limits.fuel is None


def test_strict_forces_the_safe_choices(agent_root):
    policy = build(agent_root, {"network": {"allow": True, "block_private_networks": False}}, strict=True)
    assert policy.strict and policy.net.block_private_networks and policy.net.restrict_hosts
    assert policy.limits.fuel == STRICT_DEFAULT_FUEL
    assert build(agent_root, {"limits": {"fuel": 5}}, strict=True).limits.fuel == 5
    engine = PolicyEngine(policy, resolver=hosts_file_resolver)  # a broken rule fails, never queries DNS
    with pytest.raises(Exception, match="not in allowed_domains"):
        engine.check_connect("http://93.184.216.34.nip.io/")


# --- presets ---------------------------------------------------------------------------


FULL = {
    "filesystem": {"read": ["data", "docs"], "write": ["out"], "max_read_bytes": 1000},
    "network": {
        "allow": True,
        "allowed_domains": ["*.example.com", "api.other.org"],
        "allowed_ips": ["10.0.0.0/8"],
        "block_private_networks": False,
        "timeout": 60,
        "max_response_bytes": 5000,
    },
    "shell": {
        "allow": True,
        "whitelist": ["ls", "cat"],
        "blacklist": ["rm"],
        "env_clear": False,
        "timeout": 5,
    },
    "limits": {"timeout": 100, "memory_mb": 2048, "fuel": 1000},
}


def test_preset_intersects_lists_and_takes_minimum_caps(agent_root):
    preset = {
        "name": "team",
        "runtime_fs_mode": "read-only",
        "permissions": {
            "filesystem": {"read": ["data/sub", "docs", "elsewhere"], "max_read_bytes": 5000},
            "network": {
                "allowed_domains": ["api.example.com", "*.other.org", "new.net"],
                "allowed_ips": ["10.1.0.0/16:443", "192.168.0.0/16"],
                "timeout": 10,
                "max_response_bytes": 1_000_000,
            },
            "shell": {"whitelist": ["ls", "echo"], "blacklist": ["curl"], "timeout": 50, "env_clear": True},
            "limits": {"timeout": 1000, "memory_mb": 128},
        },
    }
    policy = build(agent_root, FULL, "read-write", preset=preset)
    assert policy.preset == "team" and policy.fs.mode == "read-only"
    assert sorted(r.spec for r in policy.fs.read) == ["data/sub", "docs"]
    assert policy.fs.write == ()  # out/ is not readable under the preset, so not writable either
    assert policy.fs.max_read_bytes == 1000
    assert [r.spec for r in policy.net.allowed_domains] == ["api.example.com", "api.other.org"]
    assert [(str(r.network), r.port) for r in policy.net.allowed_ips] == [("10.1.0.0/16", 443)]
    assert (policy.net.timeout, policy.net.max_response_bytes) == (10, 5000)
    assert policy.shell.whitelist == ("ls",) and policy.shell.blacklist == ("rm", "curl")
    assert policy.shell.timeout == 5 and policy.shell.env_clear
    assert (policy.limits.timeout, policy.limits.memory_mb, policy.limits.fuel) == (100, 128, 1000)


def test_preset_cannot_widen_anything(agent_root):
    generous = {
        "runtime_fs_mode": "read-write",
        "permissions": {
            "filesystem": {"read": ["/"], "write": ["/"], "max_read_bytes": 1 << 30},
            "network": {"allow": True, "block_private_networks": False, "timeout": 3600},
            "shell": {"allow": True, "env_clear": False, "timeout": 86400},
            "limits": {"timeout": 86400, "memory_mb": 65536, "fuel": 1 << 60},
        },
    }
    bare = build(agent_root, None, preset=generous)
    assert bare.fs.mode == "none" and not bare.net.allow and not bare.shell.allow
    assert bare.limits == Limits(fuel=1 << 60)  # metering where the manifest had none is a tightening
    tight = {"filesystem": {"read": ["data"]}, "network": {"allow": True, "allowed_domains": ["a.com"]}}
    policy = build(agent_root, tight, "read-only", preset=generous)
    assert policy.fs.mode == "read-only" and [r.spec for r in policy.fs.read] == ["data"]
    assert policy.net.block_private_networks and [r.spec for r in policy.net.allowed_domains] == ["a.com"]


def test_preset_host_lists_restrict_an_open_manifest(agent_root):
    preset = {"permissions": {"network": {"allowed_domains": ["*.example.com"]}}}
    policy = build(agent_root, {"network": {"allow": True}}, preset=preset)
    assert policy.net.restrict_hosts and [r.spec for r in policy.net.allowed_domains] == ["*.example.com"]
    disjoint = build(agent_root, {"network": {"allow": True, "allowed_domains": ["example.com"]}}, preset=preset)
    assert disjoint.net.restrict_hosts and disjoint.net.allowed_domains == ()  # apex not under *.example.com


def test_preset_validation(agent_root):
    assert "preset.permissions.shell.working_dir: a preset cannot set" in error(
        agent_root, preset={"permissions": {"shell": {"working_dir": "x"}}}
    )
    assert "preset.colour: unknown key" in error(agent_root, preset={"colour": "red"})
    assert "preset.permissions.network.alow: unknown key" in error(
        agent_root, preset={"permissions": {"network": {"alow": True}}}
    )
    assert "preset.runtime_fs_mode: must be one of" in error(agent_root, preset={"runtime_fs_mode": "x"})


def _never_wider(tight: Policy, loose: Policy) -> None:
    """Every permission of ``tight`` is also granted by ``loose``; every cap is no larger."""
    from hugind.policy.model import FS_MODES

    assert FS_MODES.index(tight.fs.mode) <= FS_MODES.index(loose.fs.mode)
    for mine, theirs in ((tight.fs.read, loose.fs.read + loose.fs.write), (tight.fs.write, loose.fs.write)):
        assert all(any(r.path.is_relative_to(o.path) for o in theirs) for r in mine)
    assert tight.fs.max_read_bytes <= loose.fs.max_read_bytes
    assert tight.net.allow <= loose.net.allow and tight.shell.allow <= loose.shell.allow
    assert tight.net.block_private_networks >= loose.net.block_private_networks
    assert tight.net.restrict_hosts >= loose.net.restrict_hosts
    assert tight.net.timeout <= loose.net.timeout
    assert tight.net.max_response_bytes <= loose.net.max_response_bytes
    assert tight.shell.env_clear >= loose.shell.env_clear
    assert set(loose.shell.blacklist) <= set(tight.shell.blacklist)
    if loose.shell.whitelist is not None:
        assert tight.shell.whitelist is not None and set(tight.shell.whitelist) <= set(loose.shell.whitelist)
    assert tight.shell.timeout <= loose.shell.timeout and tight.shell.max_output <= loose.shell.max_output
    assert tight.limits.timeout <= loose.limits.timeout and tight.limits.memory_mb <= loose.limits.memory_mb
    assert (tight.limits.fuel or float("inf")) <= (loose.limits.fuel or float("inf"))


@pytest.mark.parametrize("name", sorted(PRESETS))
@pytest.mark.parametrize("mode", [None, "read-only", "scratch", "read-write"])
def test_shipped_presets_only_tighten(agent_root, name, mode):
    preset = load_preset(PRESETS[name])
    assert preset["name"] == name and preset["description"]
    for manifest in (None, FULL, {"network": {"allow": True}, "shell": {"allow": True}}):
        _never_wider(build(agent_root, manifest, mode, preset=preset), build(agent_root, manifest, mode))


def test_strict_preset_content(agent_root):
    policy = build(agent_root, FULL, "read-write", preset=load_preset(PRESETS["strict"]))
    assert policy.fs.mode == "scratch" and not policy.shell.allow and policy.net.block_private_networks
    assert policy.limits.memory_mb == 256


def test_load_preset_errors(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("permissions: [unclosed")
    with pytest.raises(ManifestError, match="invalid YAML"):
        load_preset(bad)
    bad.write_text("- a list")
    with pytest.raises(ManifestError, match="a preset must be a mapping"):
        load_preset(bad)
    with pytest.raises(ManifestError, match="cannot read the preset"):
        load_preset(tmp_path / "missing.yaml")


# --- describe / to_json ---------------------------------------------------------------------


def test_describe_in_plain_words(agent_root):
    engine = PolicyEngine(build(agent_root, FULL, None, strict=True, preset=load_preset(PRESETS["ci"])))
    text = "\n".join(engine.describe())
    for fragment in (
        "--strict",
        "preset: ci",
        "filesystem: runtime_fs_mode read-write",
        "readable: data, docs, out",
        "writable: out",
        "network: only *.example.com, api.other.org, 10.0.0.0/8",
        "blocked, except addresses named by an allowed_ips entry",
        "shell: only ls, cat",
        "never: rm, sudo",
        "limits: run timeout 100 s, memory 1024 MiB, 1,000 fuel",
    ):
        assert fragment in text, fragment
    assert "\n".join(PolicyEngine(build(agent_root)).describe()).startswith(
        "filesystem: none (every file access is denied)\nnetwork: disabled"
    )


def test_to_json_is_plain_json(agent_root):
    data = PolicyEngine(build(agent_root, FULL)).to_json()
    assert json.loads(json.dumps(data)) == data
    assert data["network"]["allowed_domains"] == ["*.example.com", "api.other.org"]
    assert data["shell"]["whitelist"] == ["ls", "cat"] and data["filesystem"]["mode"] == "read-write"
    assert data["limits"] == {"timeout": 100, "memory_mb": 2048, "fuel": 1000, "max_output_bytes": 10 << 20}


# --- the JSON Schema stays in step with the parser -----------------------------------------


def test_schema_documents_exactly_the_parsed_keys():
    from hugind.policy.model import FS_MODES
    from hugind.policy.parse import SECTIONS

    schema = json.loads((REPO / "policy" / "agent.schema.json").read_text())
    sections = schema["$defs"]["permissions"]["properties"]
    assert set(sections) == set(SECTIONS)
    for name, keys in SECTIONS.items():
        assert set(sections[name]["properties"]) == set(keys), name
    assert sorted(schema["properties"]["runtime_fs_mode"]["enum"]) == sorted(FS_MODES)
    defaults = Policy(agent_root=Path("/"))
    assert sections["network"]["properties"]["max_response_bytes"]["default"] == defaults.net.max_response_bytes
    assert sections["shell"]["properties"]["max_output"]["default"] == defaults.shell.max_output
    assert sections["limits"]["properties"]["timeout"]["default"] == defaults.limits.timeout
    assert sections["limits"]["properties"]["memory_mb"]["default"] == defaults.limits.memory_mb
    assert sections["filesystem"]["properties"]["max_read_bytes"]["default"] == defaults.fs.max_read_bytes


def test_schema_top_level_matches_the_manifest_loader():
    manifest = pytest.importorskip("hugind.manifest")
    schema = json.loads((REPO / "policy" / "agent.schema.json").read_text())
    assert set(schema["properties"]) == set(manifest.KNOWN_KEYS)
