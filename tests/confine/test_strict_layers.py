"""``--strict`` on a machine missing a layer children rely on: exit 2 before anything starts.

Layers are taken away with HUGIND_CONFINE_DISABLE (it can only remove them). The agent
would write a file with its first command; under --strict the run stops before the agent
runs, naming the missing layer; without --strict it runs, with a warning."""

from __future__ import annotations

import os

import pytest

from tests.redteam.helpers import probe_source, write_manifest

TOUCH = "return await run_command('touch out/ran', {detailed: true});"
PERMS = {"shell": {"allow": True, "whitelist": ["touch"]}, "filesystem": {"write": ["out"]}}


@pytest.mark.parametrize(
    ("disabled", "named"),
    [
        ("seccomp", "syscall filter"),
        ("bwrap,namespaces,landlock", "filesystem"),
        ("bwrap,namespaces", "processes"),
        ("nobody", "unprivileged user"),
    ],
)
def test_strict_exits_2_naming_the_missing_layer_before_any_child(cli, tmp_path, disabled, named):
    if disabled == "nobody" and os.geteuid() != 0:
        pytest.skip("children are nobody only for a root-run hugind; any other user's are that user")
    root = tmp_path / "a"
    (root / "out").mkdir(parents=True)
    (root / "main.js").write_text(probe_source(TOUCH))
    write_manifest(root, PERMS)
    res = cli("run", str(root), "--strict", env={"HUGIND_CONFINE_DISABLE": disabled})
    assert res.code == 2, res.stdout + res.stderr
    assert f"cannot confine the agent's children: missing {named}" in res.stderr
    assert not (root / "out" / "ran").exists()
    relaxed = cli("run", str(root), env={"HUGIND_CONFINE_DISABLE": disabled})
    assert relaxed.code == 0, relaxed.stderr
    assert "cannot confine the child" in relaxed.stderr and (root / "out" / "ran").exists()


def test_strict_without_children_needs_no_layer(cli, tmp_path):
    root = tmp_path / "b"
    root.mkdir()
    (root / "main.js").write_text(probe_source("return 1;"))
    write_manifest(root, {})
    assert cli("run", str(root), "--strict", env={"HUGIND_CONFINE_DISABLE": "seccomp"}).code == 0
