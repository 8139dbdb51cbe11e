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
from tests.redteam.conftest import _network_guard  # noqa: F401 - autouse: nothing may leave loopback
from tests.redteam.helpers import assert_denied
from tests.redteam.test_fs_attacks import CALLS
from tests.redteam.test_fs_attacks import snapshot as js_snapshot
from tests.redteam.test_net_attacks import BAD_URLS_ON_LOOPBACK, BLOCKED_ON_LOOPBACK

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
