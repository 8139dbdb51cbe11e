"""hugind/confine/gate.py in-process: who may start children, the --strict refusal, and what
``checked_plan`` refuses, audits and warns of when a layer is missing.

Written for the mutation run (bench/mutation.py confine.gate): test_gate.py drives the real CLI
in subprocesses, which mutmut cannot attribute to the gate. Layers are taken away with
HUGIND_CONFINE_DISABLE (it can only remove them), the engine is a real PolicyEngine.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hugind.confine.command import ProxyEndpoint, confined, missing_layers
from hugind.confine.gate import UnconfinableChildren, checked_plan, may_start_children, prepare, refuse_unconfinable
from hugind.confine.plan import rlimits_for
from hugind.confine.probe import DISABLE_ENV, capabilities
from hugind.errors import ExitCode, PermissionDenied
from hugind.manifest import Manifest
from hugind.policy import PolicyEngine, build_policy

ALL_LAYERS = "bwrap,namespaces,landlock,cgroup,seccomp,nobody"


def manifest(permissions: dict | None, mcp: tuple[dict, ...] = ()) -> Manifest:
    return Manifest(name="a", entry_point="main.js", permissions=permissions, mcp=mcp)


@pytest.mark.parametrize(
    ("permissions", "mcp", "policy_file", "expected"),
    [
        (None, (), False, False),
        ({}, (), False, False),
        (None, (), True, True),
        (None, ({"name": "s", "command": ["x"]},), False, True),
        ({"preset": "ci"}, (), False, True),
        ({"shell": {"allow": True}}, (), False, True),
        ({"shell": {"allow": False}}, (), False, False),
        ({"shell": {}}, (), False, False),
        ({"shell": True}, (), False, True),
        ({"shell": False}, (), False, False),
        ({"filesystem": {"read": ["."]}}, (), False, False),
    ],
)
def test_may_start_children(permissions, mcp, policy_file, expected):
    assert may_start_children(manifest(permissions, mcp), policy_file) is expected


def test_strict_refusal_names_every_missing_layer(monkeypatch):
    monkeypatch.setenv(DISABLE_ENV, ALL_LAYERS)
    caps = capabilities()
    missing = missing_layers(caps)
    # filesystem, processes, network, syscall filter; as root also process count and user.
    assert len(missing) == (6 if caps.root else 4)
    with pytest.raises(UnconfinableChildren) as caught:
        refuse_unconfinable(manifest({"shell": {"allow": True}}), False)
    assert (
        str(caught.value) == f"--strict: this machine cannot confine the agent's children: missing {'; '.join(missing)}"
    )
    assert caught.value.exit_code == ExitCode.USAGE


def test_strict_does_not_refuse_an_agent_that_starts_no_child(monkeypatch):
    monkeypatch.setenv(DISABLE_ENV, ALL_LAYERS)
    assert refuse_unconfinable(manifest({"shell": {"allow": False}}), False) is None


def test_strict_passes_when_no_layer_is_missing(monkeypatch):
    monkeypatch.delenv(DISABLE_ENV, raising=False)
    if missing_layers(capabilities()):
        pytest.skip(f"this machine lacks a layer: {missing_layers(capabilities())}")
    assert refuse_unconfinable(manifest({"shell": {"allow": True}}), True) is None


def engine(root: Path, *, require: bool, read: list[str] | None = None, network: bool = False) -> PolicyEngine:
    permissions = {
        "shell": {"allow": True, "whitelist": ["echo"], "require_confinement": require},
        "filesystem": {"read": read or ["."]},
        "network": {"allow": network, **({"allowed_ips": ["127.0.0.1"]} if network else {})},
    }
    return PolicyEngine(build_policy(permissions, runtime_fs_mode=None, agent_root=root))


def _plan(eng: PolicyEngine, root: Path):
    return checked_plan(eng, ["echo", "hi"], str(root), {}, capability="shell", request={"command": "echo hi"})


def test_require_confinement_is_an_audited_denial_naming_the_missing_layers(tmp_path, monkeypatch):
    monkeypatch.setenv(DISABLE_ENV, ALL_LAYERS)
    missing = list(missing_layers(capabilities()))
    eng = engine(tmp_path, require=True)
    with pytest.raises(PermissionDenied) as caught:
        _plan(eng, tmp_path)
    reason = f"shell: this machine cannot confine the child: missing {'; '.join(missing)}"
    assert str(caught.value) == f"{reason} (shell.require_confinement is on)"
    assert caught.value.recorded is True
    assert eng.denials == 1
    entry = list(eng.audit.entries)[-1]
    assert (entry["capability"], entry["decision"], entry["rule"]) == ("shell", "deny", "shell.confinement")
    assert entry["request"] == {"command": "echo hi", "missing": missing}


def test_a_missing_layer_without_require_warns_once_and_plans(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(DISABLE_ENV, ALL_LAYERS)
    missing = missing_layers(capabilities())
    eng = engine(tmp_path, require=False)
    plan, caps = _plan(eng, tmp_path)
    _plan(eng, tmp_path)
    assert plan.argv[0].endswith("echo") and caps == capabilities()
    assert eng.denials == 0
    err = capsys.readouterr().err
    assert err == (
        f"hugind: warning: shell: this machine cannot confine the child: missing {'; '.join(missing)}; "
        "starting it with the layers available\n"
    )


def test_all_layers_present_means_no_warning(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(DISABLE_ENV, raising=False)
    if missing_layers(capabilities()):
        pytest.skip(f"this machine lacks a layer: {missing_layers(capabilities())}")
    eng = engine(tmp_path, require=True)
    _plan(eng, tmp_path)
    assert capsys.readouterr().err == ""
    assert eng.denials == 0


def test_absent_roots_are_named_once_singular_and_plural(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(DISABLE_ENV, raising=False)
    if missing_layers(capabilities()):
        pytest.skip(f"this machine lacks a layer: {missing_layers(capabilities())}")
    one = engine(tmp_path, require=False, read=[".", "nowhere"])
    _plan(one, tmp_path)
    _plan(one, tmp_path)
    assert capsys.readouterr().err == (
        "hugind: warning: filesystem root nowhere do not exist: children see nothing there\n"
    )
    two = engine(tmp_path, require=False, read=["gone1", "gone2"])
    _plan(two, tmp_path)
    assert capsys.readouterr().err == (
        "hugind: warning: filesystem roots gone1, gone2 do not exist: children see nothing there\n"
    )


def test_network_without_a_proxy_is_warned_once(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(DISABLE_ENV, raising=False)
    if missing_layers(capabilities()):
        pytest.skip(f"this machine lacks a layer: {missing_layers(capabilities())}")
    eng = engine(tmp_path, require=False, network=True)
    plan, _ = _plan(eng, tmp_path)
    _plan(eng, tmp_path)
    assert plan.network == "proxy"
    assert capsys.readouterr().err == (
        "hugind: warning: shell: the policy allows network, but children get none here (no filtering proxy available)\n"
    )
    quiet = engine(tmp_path, require=False, network=False)
    assert _plan(quiet, tmp_path)[0].network == "none"
    assert capsys.readouterr().err == ""


def test_a_policy_file_alone_makes_strict_check_the_layers(monkeypatch):
    monkeypatch.setenv(DISABLE_ENV, ALL_LAYERS)
    with pytest.raises(UnconfinableChildren):
        refuse_unconfinable(manifest(None), True)


def test_an_mcp_server_is_planned_with_the_runs_limits_not_the_shells(tmp_path, monkeypatch):
    monkeypatch.setenv(DISABLE_ENV, ALL_LAYERS)
    permissions = {"shell": {"allow": True, "whitelist": ["echo"], "timeout": 2}, "limits": {"timeout": 30}}
    eng = PolicyEngine(build_policy(permissions, runtime_fs_mode=None, agent_root=tmp_path))
    server, _ = checked_plan(eng, ["echo", "hi"], str(tmp_path), {}, capability="mcp", request={"server": "s"})
    shell, _ = _plan(eng, tmp_path)
    assert server.rlimits == rlimits_for(eng.policy, "mcp")
    assert (server.rlimits.cpu_seconds, shell.rlimits.cpu_seconds) == (31, 3)


def test_prepare_hands_the_checked_plan_and_the_proxy_to_the_launch(tmp_path, monkeypatch, capsys):
    # Every layer taken away, so the launch is the launcher's argv with no cgroup and nothing
    # started; the proxy's variables reach the child only with a network plan.
    monkeypatch.setenv(DISABLE_ENV, ALL_LAYERS)
    proxy = ProxyEndpoint("/nonexistent/proxy.sock", 3128, "/nonexistent/forwarder.py", {"HTTP_PROXY": "http://p"})
    eng = engine(tmp_path, require=False, network=True)
    launch = prepare(eng, ["echo", "hi"], str(tmp_path), {"A": "1"}, capability="shell", request={}, proxy=proxy)
    # The plan was checked knowing the proxy: no "children get none here" warning.
    assert "no filtering proxy" not in capsys.readouterr().err
    plan, caps = _plan(eng, tmp_path)
    assert launch.argv == confined(plan, caps, proxy).argv
    assert launch.argv[-2:] == [plan.argv[0], "hi"]
    assert launch.env["HTTP_PROXY"] == "http://p" and launch.env["A"] == "1"
    assert launch.cgroup is None
    with pytest.raises(PermissionDenied):
        prepare(engine(tmp_path, require=True), ["echo", "hi"], str(tmp_path), {}, capability="shell", request={})
