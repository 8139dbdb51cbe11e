"""The red-team vectors, replayed by Python agents: the same denials, rules and messages as JS.

The tables are the ones the JS red-team and policy suites use
(tests/policy/policy_vectors.py, tests/redteam/test_net_attacks.py); each
vector runs as a real Python agent and must be refused exactly as the JS
test expects (assert_denied: error kind, message fragment, audited rule).
Reads out of the roots are also tried with Python's own ``open()``, which
goes through WASI and the preopens: the secret outside never leaks.
"""

from __future__ import annotations

import pytest

from tests.policy.policy_vectors import (
    FS_POLICY,
    FS_READ_ESCAPES,
    FS_WRITE_ESCAPES,
    NET_POLICY,
    SHELL_DENIED,
    SHELL_POLICY,
    build_fs_layout,
)
from tests.python.helpers import probe
from tests.redteam.conftest import _network_guard, server, server2  # noqa: F401 - fixtures (the guard: autouse)
from tests.redteam.helpers import assert_denied
from tests.redteam.test_fs_attacks import CALLS
from tests.redteam.test_fs_attacks import snapshot as js_snapshot
from tests.redteam.test_net_attacks import (
    BAD_URLS_ON_LOOPBACK,
    BLOCKED_ON_LOOPBACK,
    DISGUISES_ON_LOOPBACK,
    REDIRECTS_ON_LOOPBACK,
    only,
)
from tests.redteam.test_shell_attacks import INJECTIONS, LOOKED_THROUGH, SHELL, TRAMPOLINES, WHITELIST, shell

SECRET = "TOP SECRET"


def snapshot(top):
    """The JS suite's snapshot, without the Python agent's own main.py."""
    return {k: v for k, v in js_snapshot(top).items() if not k.endswith("main.py")}


@pytest.fixture
def layout(tmp_path):
    root, outside = tmp_path / "agent", tmp_path / "outside"
    root.mkdir()
    build_fs_layout(root, outside)
    return root, outside


@pytest.mark.parametrize(("path", "rule", "fragment"), FS_READ_ESCAPES, ids=[v[0] for v in FS_READ_ESCAPES])
def test_read_escape_is_denied(layout, path, rule, fragment):
    root, outside = layout
    path = path.replace("{outside}", str(outside))
    before = snapshot(root.parent)
    body = f"""
    try:
        with open({path!r}) as f:
            leaked = f.read()
    except OSError as e:
        leaked = type(e).__name__
    hugind.eprint("wasi:", leaked)
    return hugind.fs.read_text({path!r})
    """
    out = probe(root, body, FS_POLICY)
    assert_denied(out, rule, fragment, capability="filesystem")
    assert SECRET not in repr(out.value) and SECRET not in out.stderr
    assert snapshot(root.parent) == before


@pytest.mark.parametrize(
    ("op", "args", "rule", "fragment"),
    FS_WRITE_ESCAPES,
    ids=[f"{v[0]}:{next(iter(v[1].values()))}" for v in FS_WRITE_ESCAPES],
)
def test_write_escape_is_denied_and_changes_nothing(layout, op, args, rule, fragment):
    root, outside = layout
    before = snapshot(root.parent)
    call_args = ", ".join(repr(args[k].replace("{outside}", str(outside))) for k in CALLS[op])
    out = probe(root, f"return hugind.{op}({call_args})", FS_POLICY)
    assert_denied(out, rule, fragment, capability="filesystem")
    assert snapshot(root.parent) == before


def test_wasi_writes_outside_the_write_roots_fail(layout):
    root, _outside = layout
    before = snapshot(root.parent)
    body = """
    results = []
    for path in ["data/readme.txt", "notes.txt", "new.txt", "out/dirlink/secret.txt", "out/link_out", "../x.txt"]:
        try:
            with open(path, "w") as f:
                f.write("overwritten")
            results.append("written")
        except OSError as e:
            results.append(type(e).__name__)
    return results
    """
    out = probe(root, body, FS_POLICY)
    assert "written" not in out.value["value"], out.value
    assert snapshot(root.parent) == before


@pytest.mark.parametrize(("url", "rule", "fragment"), BLOCKED_ON_LOOPBACK, ids=[v[0] for v in BLOCKED_ON_LOOPBACK])
def test_blocked_address_forms_are_denied_before_connecting(tmp_path, url, rule, fragment):
    out = probe(tmp_path / "agent", f"return hugind.http_get({url!r})", NET_POLICY)
    assert_denied(out, rule, fragment, capability="network")


@pytest.mark.parametrize(("url", "fragment"), BAD_URLS_ON_LOOPBACK, ids=[v[0] for v in BAD_URLS_ON_LOOPBACK])
def test_bad_urls_and_schemes_are_refused(tmp_path, url, fragment):
    out = probe(tmp_path / "agent", f"return await hugind.http_get_async({url!r})", NET_POLICY)
    assert_denied(out, "network.url", fragment, capability="network")


@pytest.mark.parametrize(("command", "rule", "fragment"), SHELL_DENIED, ids=[v[0] for v in SHELL_DENIED])
def test_shell_vectors_are_denied(tmp_path, command, rule, fragment):
    out = probe(tmp_path / "agent", f"return hugind.run_command({command!r})", SHELL_POLICY)
    assert_denied(out, rule, fragment, capability="shell")


def _run(command: str) -> str:
    return f"return hugind.run_command({command!r}, detailed=True)"


@pytest.mark.parametrize("command", INJECTIONS)
def test_injection_under_a_whitelist_is_denied(tmp_path, command):
    out = probe(tmp_path / "agent", _run(command), SHELL)
    assert_denied(out, "shell.whitelist", "program 'touch' is not in the whitelist", capability="shell")
    assert not (tmp_path / "agent" / "pwned").exists()


@pytest.mark.parametrize(("command", "tool"), TRAMPOLINES)
def test_trampolines_are_denied_under_a_whitelist(tmp_path, command, tool):
    out = probe(tmp_path / "agent", _run(command), SHELL)
    assert_denied(out, "shell.trampoline", f"'{tool}' runs other programs")
    assert not (tmp_path / "agent" / "pwned").exists()


@pytest.mark.parametrize(("command", "extra"), LOOKED_THROUGH)
def test_listed_trampolines_are_looked_through(tmp_path, command, extra):
    out = probe(tmp_path / "agent", _run(command), shell(whitelist=[*WHITELIST, extra]))
    assert_denied(out, "shell.whitelist", "program 'touch' is not in the whitelist")
    assert not (tmp_path / "agent" / "pwned").exists()


@pytest.mark.parametrize(("host", "rule", "fragment"), DISGUISES_ON_LOOPBACK, ids=[v[0] for v in DISGUISES_ON_LOOPBACK])
def test_loopback_server_is_unreachable_under_the_default_block(tmp_path, server, host, rule, fragment):  # noqa: F811
    out = probe(tmp_path / "agent", f"return hugind.http_get('http://{host}:{server.port}/hello')", NET_POLICY)
    assert_denied(out, rule, fragment)
    assert server.requests == []


@pytest.mark.parametrize(
    ("location", "rule", "fragment"),
    [v[1:] for v in REDIRECTS_ON_LOOPBACK],
    ids=[v[0] for v in REDIRECTS_ON_LOOPBACK],
)
def test_redirect_from_allowed_server_to_denied_target(tmp_path, server, server2, location, rule, fragment):  # noqa: F811
    fill = {"port": server.port, "other": server2.port}
    server.redirect_to["0"] = location.format(**fill)
    out = probe(tmp_path / "agent", f"return hugind.http_get({server.url('/redirect/0')!r})", only(server))
    assert_denied(out, rule, fragment.format(**fill))
    assert server.paths() == ["/redirect/0"]
    assert server2.requests == []
    assert [e["decision"] for e in out.audit] == ["allow", "deny"]
