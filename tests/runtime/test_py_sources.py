"""The private copy of a Python agent's sources (hugind/sandbox/py_sources.py)."""

from __future__ import annotations

import gc
import stat

import pytest

from hugind.errors import UsageError
from hugind.sandbox import py_sources


def test_the_copy_holds_exactly_the_sources_read_only_in_a_private_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("HUGIND_CACHE_DIR", str(tmp_path / "cache"))
    root = py_sources.materialize({"main.py": b"print(1)\n", "pkg/util.py": b"X = 2\n"})
    try:
        assert root.parent == tmp_path / "cache" / "py-sources"  # where no policy reaches
        assert stat.S_IMODE(root.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(root.stat().st_mode) == 0o700
        files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
        assert files == ["main.py", "pkg/util.py"]
        assert (root / "pkg" / "util.py").read_bytes() == b"X = 2\n"
        assert stat.S_IMODE((root / "main.py").stat().st_mode) == 0o400
    finally:
        py_sources.remove(root)
    assert not root.exists()


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("../main.py", "not a plain relative path"),
        ("/etc/x.py", "not a plain relative path"),
        ("pkg/../../main.py", "not a plain relative path"),
        (".env", "not a .py file"),
        ("data/secret.txt", "not a .py file"),
    ],
)
def test_a_name_that_could_leave_the_copy_or_is_not_python_is_refused_before_writing(name, why, tmp_path, monkeypatch):
    with pytest.raises(UsageError, match=why):
        py_sources.materialize({"main.py": b"", name: b"x"}, base=tmp_path)
    assert list(tmp_path.iterdir()) == []  # nothing was made


def test_the_copy_goes_with_its_owner(tmp_path):
    class Owner:
        pass

    owner = Owner()
    root = py_sources.materialize({"main.py": b""}, base=tmp_path)
    py_sources.tie_to(owner, root)
    assert root.is_dir()
    del owner
    gc.collect()
    assert not root.exists()


def test_a_base_that_is_not_private_is_refused(tmp_path, monkeypatch):
    from hugind.errors import EngineError

    monkeypatch.setenv("HUGIND_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache" / "py-sources").mkdir(parents=True)
    (tmp_path / "cache" / "py-sources").chmod(0o777)  # another user could swap the modules in
    with pytest.raises(EngineError, match="not a private directory"):
        py_sources.materialize({"main.py": b""})
