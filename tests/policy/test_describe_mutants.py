"""What ``hugind check`` tells the user, word for word, and the JSON it prints.

The description is the user's only view of the effective policy before a run,
so each rendering below is pinned whole: a changed word, a lost line or a
wrong unit is a wrong statement about what the agent may do. Policies are
built by the real parser (presets and ``--strict`` included), as the CLI does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hugind.policy import PolicyEngine, build_policy, load_preset
from hugind.policy.describe import describe_policy, policy_json
from hugind.policy.shell import SAFE_PATH

REPO = Path(__file__).resolve().parents[2]
MiB = 1024 * 1024

SPECIAL = "  /proc, /sys, /dev: denied unless listed explicitly; symlinks are resolved before checking"
BLOCKED = (
    "  private, loopback, link-local/metadata and CGNAT addresses: blocked, except addresses "
    "named by an allowed_ips entry inside the blocked range"
)
ALWAYS = "  unspecified (0.0.0.0, ::), multicast, broadcast and reserved addresses: always blocked"
MINIMAL_ENV = (
    f"  programs looked up in {SAFE_PATH}; children get a minimal environment (PATH, HOME, LANG) "
    "without loader/interpreter hooks"
)
DECLARED_ENV = (
    f"  programs looked up in {SAFE_PATH}; children get PATH, HOME, LANG and the declared env "
    "without loader/interpreter hooks"
)
DEFAULT_LIMITS = "limits: run timeout 300 s, memory 512 MiB, fuel not metered, output up to 10 MiB"


@pytest.fixture
def root(agent_root: Path) -> Path:
    for name in ("data", "docs", "out", "work"):
        (agent_root / name).mkdir()
    return agent_root


def policy(root: Path, permissions=None, mode=None, **kw):
    return build_policy(permissions, runtime_fs_mode=mode, agent_root=root, **kw)


def expected_json(root: Path, **sections) -> dict:
    """The JSON of a policy with nothing allowed, with ``sections`` changed."""
    data = {
        "agent_root": str(root.resolve()),
        "strict": False,
        "preset": None,
        "filesystem": {
            "mode": "none",
            "read": [],
            "write": [],
            "max_read_bytes": 16 * MiB,
            "max_write_bytes": 16 * MiB,
        },
        "network": {
            "allow": False,
            "restrict_hosts": False,
            "allowed_domains": [],
            "allowed_ips": [],
            "block_private_networks": True,
            "timeout": 30.0,
            "max_response_bytes": 10 * MiB,
            "max_redirects": 5,
        },
        "shell": {
            "allow": False,
            "whitelist": None,
            "blacklist": [],
            "timeout": 60.0,
            "max_output": MiB,
            "env_clear": True,
            "working_dir": None,
            "require_confinement": False,
        },
        "limits": {"timeout": 300.0, "memory_mb": 512, "fuel": None, "max_output_bytes": 10 * MiB},
    }
    for key, value in sections.items():
        if isinstance(value, dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return data


def test_nothing_allowed_is_said_capability_by_capability(root):
    p = policy(root)
    assert describe_policy(p) == [
        "filesystem: none (every file access is denied)",
        "network: disabled",
        "shell: disabled",
        DEFAULT_LIMITS,
    ]
    assert policy_json(p) == expected_json(root)


def test_strict_run_with_a_preset_names_both_and_every_tightened_value(root):
    manifest = {
        "filesystem": {"read": ["data", "docs"], "write": ["out"], "max_read_bytes": 1000, "max_write_bytes": 4096},
        "network": {
            "allow": True,
            "allowed_domains": ["*.example.com", "api.other.org"],
            "allowed_ips": ["10.0.0.0/8"],
            "block_private_networks": False,
            "timeout": 2.5,
            "max_response_bytes": 5 * MiB,
            "max_redirects": 3,
        },
        "shell": {
            "allow": True,
            "whitelist": ["ls", "cat"],
            "blacklist": ["rm"],
            "env_clear": False,
            "timeout": 5,
            "max_output": 1536,
            "working_dir": "work",
        },
        "limits": {"timeout": 100, "memory_mb": 2048, "fuel": 1234567, "max_output_bytes": 3 * MiB},
    }
    p = policy(root, manifest, strict=True, preset=load_preset(REPO / "policy" / "ci.yaml"))
    ci_blacklist = ["rm", "sudo", "su", "doas", "ssh", "scp", "curl", "wget", "nc", "ncat", "socat"]
    assert describe_policy(p) == [
        "mode: --strict (deny by default; any denial fails the run)",
        "preset: ci (can only tighten the manifest)",
        "filesystem: runtime_fs_mode read-write",
        "  readable: data, docs, out",
        "  writable: out",
        SPECIAL,
        "  reads up to 1000 bytes, files written up to 4 KiB",
        "network: only *.example.com, api.other.org, 10.0.0.0/8",
        BLOCKED,  # the preset turned block_private_networks back on
        ALWAYS,
        "  timeout 2.5 s, responses up to 5 MiB, at most 3 redirects (each re-checked)",
        "shell: only ls, cat",
        "  never: " + ", ".join(ci_blacklist),
        MINIMAL_ENV,  # the preset's env_clear wins over the manifest's false
        "  timeout 5 s, output up to 1536 bytes, working dir work",
        "limits: run timeout 100 s, memory 1024 MiB, 1,234,567 fuel, output up to 3 MiB",
    ]
    assert policy_json(p) == expected_json(
        root,
        strict=True,
        preset="ci",
        filesystem={
            "mode": "read-write",
            "read": ["data", "docs"],
            "write": ["out"],
            "max_read_bytes": 1000,
            "max_write_bytes": 4096,
        },
        network={
            "allow": True,
            "restrict_hosts": True,
            "allowed_domains": ["*.example.com", "api.other.org"],
            "allowed_ips": ["10.0.0.0/8"],
            "block_private_networks": True,
            "timeout": 2.5,
            "max_response_bytes": 5 * MiB,
            "max_redirects": 3,
        },
        shell={
            "allow": True,
            "whitelist": ["ls", "cat"],
            "blacklist": ci_blacklist,
            "timeout": 5.0,
            "max_output": 1536,
            "env_clear": True,
            "working_dir": "work",
            "require_confinement": True,
        },
        limits={"timeout": 100.0, "memory_mb": 1024, "fuel": 1234567, "max_output_bytes": 3 * MiB},
    )


def test_scratch_mode_says_what_is_writable_and_what_is_only_readable(root):
    p = policy(
        root,
        {"filesystem": {"read": ["data"], "write": ["out"]}, "network": {"allow": True}, "shell": {"allow": True}},
        "scratch",
    )
    assert describe_policy(p) == [
        "filesystem: runtime_fs_mode scratch",
        "  writable: a fresh private temp dir (the cwd; removed at the end of the run)",
        "  readable: the scratch dir, data, out",  # write roots are readable only, in scratch mode
        SPECIAL,
        "  reads up to 16 MiB, files written up to 16 MiB",
        "network: any host (http and https)",
        BLOCKED,
        ALWAYS,
        "  timeout 30 s, responses up to 10 MiB, at most 5 redirects (each re-checked)",
        "shell: any program",
        MINIMAL_ENV,
        "  timeout 60 s, output up to 1 MiB, working dir the scratch dir",
        DEFAULT_LIMITS,
    ]
    assert policy_json(p) == expected_json(
        root,
        filesystem={"mode": "scratch", "read": ["data"], "write": ["out"]},
        network={"allow": True},
        shell={"allow": True},
    )


def test_strict_without_lists_says_no_host_and_no_program_passes(root):
    p = policy(root, {"network": {"allow": True}, "shell": {"allow": True}}, "scratch", strict=True)
    assert describe_policy(p) == [
        "mode: --strict (deny by default; any denial fails the run)",
        "filesystem: runtime_fs_mode scratch",
        "  writable: a fresh private temp dir (the cwd; removed at the end of the run)",
        "  readable: the scratch dir",
        SPECIAL,
        "  reads up to 16 MiB, files written up to 16 MiB",
        "network: no host (nothing is listed)",
        BLOCKED,
        ALWAYS,
        "  timeout 30 s, responses up to 10 MiB, at most 5 redirects (each re-checked)",
        "shell: nothing (--strict requires a whitelist)",
        MINIMAL_ENV,
        "  timeout 60 s, output up to 1 MiB, working dir the scratch dir",
        "limits: run timeout 300 s, memory 512 MiB, 10,000,000,000 fuel, output up to 10 MiB",
    ]
    assert policy_json(p) == expected_json(
        root,
        strict=True,
        filesystem={"mode": "scratch"},
        network={"allow": True, "restrict_hosts": True},
        shell={"allow": True, "require_confinement": True},
        limits={"fuel": 10_000_000_000},
    )


def test_read_only_lists_write_roots_as_readable_and_nothing_writable(root):
    p = policy(
        root,
        {
            "filesystem": {"read": ["data"], "write": ["out"]},
            "network": {"allow": True, "allowed_ips": ["127.0.0.1"]},
            "shell": {"allow": True, "whitelist": []},
        },
        "read-only",
    )
    assert describe_policy(p) == [
        "filesystem: runtime_fs_mode read-only",
        "  readable: data, out",
        "  writable: nothing",
        SPECIAL,
        "  reads up to 16 MiB, files written up to 16 MiB",
        "network: only 127.0.0.1",
        BLOCKED,
        ALWAYS,
        "  timeout 30 s, responses up to 10 MiB, at most 5 redirects (each re-checked)",
        "shell: no program (empty whitelist)",
        MINIMAL_ENV,
        "  timeout 60 s, output up to 1 MiB, working dir the agent root",
        DEFAULT_LIMITS,
    ]
    assert policy_json(p) == expected_json(
        root,
        filesystem={"mode": "read-only", "read": ["data"], "write": ["out"]},
        network={"allow": True, "restrict_hosts": True, "allowed_ips": ["127.0.0.1"]},
        shell={"allow": True, "whitelist": []},
    )


def test_read_write_without_roots_reads_and_writes_nothing(root):
    p = policy(root, None, "read-write")
    assert describe_policy(p) == [
        "filesystem: runtime_fs_mode read-write",
        "  readable: nothing",
        "  writable: nothing",
        SPECIAL,
        "  reads up to 16 MiB, files written up to 16 MiB",
        "network: disabled",
        "shell: disabled",
        DEFAULT_LIMITS,
    ]
    assert policy_json(p)["filesystem"] == expected_json(root, filesystem={"mode": "read-write"})["filesystem"]


def test_read_write_lists_every_write_root_as_readable_and_writable(root):
    p = policy(root, {"filesystem": {"read": ["data"], "write": ["out", "work"]}})
    assert describe_policy(p)[:3] == [
        "filesystem: runtime_fs_mode read-write",
        "  readable: data, out, work",
        "  writable: out, work",
    ]
    assert (
        policy_json(p)["filesystem"]
        == expected_json(root, filesystem={"mode": "read-write", "read": ["data"], "write": ["out", "work"]})[
            "filesystem"
        ]
    )


def test_reachable_private_networks_and_the_declared_env_are_said_plainly(root):
    p = policy(
        root,
        {
            "network": {"allow": True, "allowed_domains": ["svc.test"], "block_private_networks": False},
            "shell": {"allow": True, "blacklist": ["rm", "dd"], "env_clear": False, "working_dir": "work"},
            "limits": {"fuel": 5000, "memory_mb": 64, "timeout": 0.5},
        },
    )
    assert describe_policy(p) == [
        "filesystem: none (every file access is denied)",
        "network: only svc.test",
        "  private networks: reachable (block_private_networks is false)",
        ALWAYS,
        "  timeout 30 s, responses up to 10 MiB, at most 5 redirects (each re-checked)",
        "shell: any program",
        "  never: rm, dd",
        DECLARED_ENV,
        "  timeout 60 s, output up to 1 MiB, working dir work",
        "limits: run timeout 0.5 s, memory 64 MiB, 5,000 fuel, output up to 10 MiB",
    ]
    assert policy_json(p) == expected_json(
        root,
        network={
            "allow": True,
            "restrict_hosts": True,
            "allowed_domains": ["svc.test"],
            "block_private_networks": False,
        },
        shell={"allow": True, "blacklist": ["rm", "dd"], "env_clear": False, "working_dir": "work"},
        limits={"fuel": 5000, "memory_mb": 64, "timeout": 0.5},
    )


@pytest.mark.parametrize(
    ("size", "shown"),
    [
        (1, "1 bytes"),
        (1000, "1000 bytes"),
        (1023, "1023 bytes"),
        (1024, "1 KiB"),
        (1025, "1025 bytes"),
        (3 * 1024, "3 KiB"),
        (MiB - 1024, "1023 KiB"),
        (MiB, "1 MiB"),
        (MiB + 1024, "1025 KiB"),
        (MiB + 1, f"{MiB + 1} bytes"),
        (7 * MiB, "7 MiB"),
        (1 << 40, "1048576 MiB"),
    ],
)
def test_sizes_are_shown_in_the_largest_whole_unit(root, size, shown):
    p = policy(root, {"filesystem": {"read": ["data"], "max_write_bytes": size}}, "read-write")
    assert describe_policy(p)[4] == f"  reads up to 16 MiB, files written up to {shown}"


def test_the_engine_describes_its_own_policy_and_its_json_survives_a_round_trip(root):
    p = policy(root, {"filesystem": {"read": ["data"]}, "shell": {"allow": True, "whitelist": ["ls"]}})
    engine = PolicyEngine(p)
    try:
        assert engine.describe() == describe_policy(p)
        data = engine.to_json()
    finally:
        engine.close()
    assert json.loads(json.dumps(data)) == data == policy_json(p)
    assert data["shell"]["whitelist"] == ["ls"] and data["filesystem"]["read"] == ["data"]
