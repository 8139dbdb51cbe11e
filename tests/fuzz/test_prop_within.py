"""``policy.fs.within`` decides containment exactly as ``PurePosixPath.is_relative_to``.

The filesystem policy compares resolved paths with their roots as strings
(pathlib costs more than the syscalls of a check); this property holds the
string form to pathlib's answer on the paths the policy compares: the ``str``
of absolute ``Path`` objects, including ``/``, a POSIX ``//`` root, decoy
siblings (``/data`` vs ``/data-evil``) and names with dots.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from hypothesis import example, given
from hypothesis import strategies as st

from hugind.policy.fs import within

NAMES = st.sampled_from(["data", "data-evil", "d", "da", "ta", ".x", "x.", "..a", "a b", "é", "proc", "-"])
PATHS = st.builds(
    lambda root, parts: str(Path(root, *parts)),
    st.sampled_from(["/", "//", "///"]),
    st.lists(NAMES, max_size=4),
)


@given(PATHS, PATHS)
@example("/data-evil", "/data")
@example("/data", "/data")
@example("/data/x", "/data")
@example("/", "/")
@example("/x", "/")
@example("//x", "/")
@example("/x", "//")
@example("//x/y", "//x")
def test_within_is_is_relative_to(path: str, root: str) -> None:
    assert within(path, root) == PurePosixPath(path).is_relative_to(root)
