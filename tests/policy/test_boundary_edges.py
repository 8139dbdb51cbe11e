"""hugind/policy/boundary.py at its edges: the refusal's whole text per kind of hugind file, the
``/etc`` secrets a child is not shown, ``internal_overlap`` and ``within`` on "//" paths.

Written against the survivors of a mutation run (bench/mutation.py policy.boundary).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hugind.paths import engine_dir
from hugind.policy.boundary import (
    CHILD_ETC_HIDDEN,
    Boundary,
    BoundaryConflict,
    refuse_conflicts,
    within,
)
from hugind.policy.model import FsPolicy, FsRoot

ADVICE = {
    "cache": "set HUGIND_CACHE_DIR (or XDG_CACHE_HOME) to a directory outside the roots",
    "engine": "install hugind outside the roots",
    "home": "set HUGIND_HOME to a directory outside the roots",
    "audit": "write the audit log (--audit) outside the roots",
}


def _refusal(root: Path, internal: Path) -> str:
    policy = FsPolicy(mode="read-only", read=(FsRoot("the-root", root),))
    with pytest.raises(BoundaryConflict) as refused:
        refuse_conflicts(policy, (internal,))
    assert refused.value.exit_code == 2
    return str(refused.value)


@pytest.mark.parametrize("kind", sorted(ADVICE))
def test_each_kind_of_hugind_file_gets_its_own_advice(kind, tmp_path, monkeypatch):
    monkeypatch.setenv("HUGIND_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HUGIND_HOME", str(tmp_path / "home"))
    internal = {
        "cache": tmp_path / "cache",
        "engine": engine_dir().resolve(),
        "home": tmp_path / "home" / "config.yaml",
        "audit": tmp_path / "audit.jsonl",
    }[kind]
    root = internal.parent
    assert _refusal(root, internal) == (
        f"filesystem root 'the-root' ({root}) contains hugind's own {internal}, which no agent or child "
        f"may reach: {ADVICE[kind]}, or list narrower roots"
    )


def test_a_root_inside_a_hugind_dir_lies_inside_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HUGIND_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "cache" / "modules"
    assert _refusal(root, tmp_path / "cache") == (
        f"filesystem root 'the-root' ({root}) lies inside hugind's own {tmp_path / 'cache'}, which no agent "
        f"or child may reach: {ADVICE['cache']}, or list narrower roots"
    )


def test_child_etc_secrets_lists_what_exists_in_table_order(tmp_path):
    etc = tmp_path / "etcX"  # a name ending in a character a strip could eat
    (etc / "ssl" / "private").mkdir(parents=True)
    (etc / "shadow").write_text("")
    (etc / "sudoers.d").mkdir()
    os.symlink("nowhere", etc / "krb5.keytab")  # a dangling link is still something to hide
    view = Boundary(FsPolicy(), tmp_path, child_etc=f"{etc}/")
    assert view.child_etc_secrets() == (
        f"{etc}/shadow",
        f"{etc}/sudoers.d",
        f"{etc}/ssl/private",
        f"{etc}/krb5.keytab",
    )
    assert [p.removeprefix(f"{etc}/") for p in view.child_etc_secrets()] == [
        name for name in CHILD_ETC_HIDDEN if name in ("shadow", "sudoers.d", "ssl/private", "krb5.keytab")
    ]


def test_internal_overlap_names_the_hugind_path_either_way(tmp_path):
    cache, home = tmp_path / "cache", tmp_path / "home" / "config.yaml"
    view = Boundary(FsPolicy(), tmp_path, internal=(cache, home))
    assert view.internal_overlap(str(cache / "m.wasm")) == str(cache)  # inside
    assert view.internal_overlap(str(tmp_path)) == str(cache)  # an ancestor: the first one listed
    assert view.internal_overlap(str(tmp_path / "home")) == str(home)
    assert view.internal_overlap(str(tmp_path / "cache-other")) is None  # a sibling sharing a prefix
    assert view.internal_overlap(str(tmp_path / "agent")) is None


def test_within_leaves_double_slash_roots_to_pathlib():
    assert within("//x/y", "//x") is True
    assert within("//x/y", "/x") is False  # POSIX: "//" may be a root of its own
    assert within("/x/y", "//x") is False
    assert within("/x/y", "/x") is True and within("/x-y", "/x") is False
