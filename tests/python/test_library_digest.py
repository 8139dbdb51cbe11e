"""The guest library's digest (part of the Python snapshot's cache key) is remembered per
process by the stat of its files (py_start.library_digest), as a warm server's children
inherit it: any change to the library, even one that keeps a file's size and
modification time, is a new digest."""

from __future__ import annotations

import os

import pytest

from hugind.sandbox import py_interpreter, py_start


@pytest.fixture
def library(tmp_path, monkeypatch):
    root = tmp_path / "lib"
    (root / "hugind").mkdir(parents=True)
    (root / "boot.py").write_text("print('boot')\n")
    (root / "hugind" / "__init__.py").write_text("X = 1\n")
    monkeypatch.setattr(py_interpreter, "guest_library", lambda: root)
    monkeypatch.setattr(py_start, "_library_digests", {})
    return root


def _uncached() -> str:
    saved = dict(py_start._library_digests)
    py_start._library_digests.clear()
    try:
        return py_start.library_digest()
    finally:
        py_start._library_digests.clear()
        py_start._library_digests.update(saved)


def test_the_digest_is_remembered_while_nothing_changes(library):
    first = py_start.library_digest()
    assert len(py_start._library_digests) == 1
    assert py_start.library_digest() == first == _uncached()


def test_a_rewrite_that_keeps_size_and_mtime_is_a_new_digest(library):
    first = py_start.library_digest()
    target = library / "hugind" / "__init__.py"
    st = target.stat()
    target.write_text("X = 2\n")  # same size
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # same modification time
    second = py_start.library_digest()
    assert second != first and second == _uncached()


def test_a_file_added_is_a_new_digest(library):
    first = py_start.library_digest()
    (library / "hugind" / "extra.py").write_text("")
    second = py_start.library_digest()
    assert second != first and second == _uncached()
    (library / "hugind" / "extra.py").unlink()
    assert py_start.library_digest() == first
