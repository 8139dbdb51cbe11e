"""``policy.fs._realpath`` (the kernel's answer when it has one) equals ``os.path.realpath``.

On a tree of hostile links: absolute and relative links, links to links, a
dangling link, a loop, a link to a file used as a directory, ``..`` through a
link, trailing slashes, missing components. The fast path may only ever give
the answer ``os.path.realpath`` gives.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from hugind.policy.fs import _realpath

PARTS = st.sampled_from(
    ["d", "f", "abs", "rel", "chain", "dangling", "loop", "filelink", "up", "missing", "..", ".", "", "d2"]
)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("realpath")
    (root / "d" / "d2").mkdir(parents=True)
    (root / "d" / "f").write_text("x")
    (root / "f").write_text("x")
    (root / "abs").symlink_to(root / "d")
    (root / "rel").symlink_to("d/d2")
    (root / "chain").symlink_to("abs")
    (root / "dangling").symlink_to("nowhere")
    (root / "loop").symlink_to("loop")
    (root / "filelink").symlink_to("f")
    (root / "d" / "up").symlink_to("..")
    return root


@given(st.lists(PARTS, max_size=5), st.booleans())
@example(["abs", "..", "f"], False)
@example(["rel", "..", "..", "f"], False)
@example(["filelink", "x"], False)
@example(["d", "up", "abs", "f"], True)
@example(["loop"], False)
@example(["dangling"], True)
def test_fast_realpath_is_realpath(tree: Path, parts: list[str], trailing_slash: bool) -> None:
    path = os.path.join(tree, *parts) + ("/" if trailing_slash else "")
    assert _realpath(path) == os.path.realpath(path)
