"""hugind/host/openat2.py: the kernel's openat2 and the hand walk that stands in for it give
the same answer (the same object, or the same errno) over the same attack cases, and each
refusal carries the errno that names it."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from hugind.host import openat2

needs_kernel = pytest.mark.skipif(not openat2.available(), reason="no openat2 here (kernel < 5.6 or filtered)")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """root/ is the directory opened beneath; outside/ is what an attacker aims at."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "dir" / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "dir" / "file").write_text("inside")
    (outside / "secret").write_text("outside")
    (root / "abs_out").symlink_to(outside)  # absolute, to outside
    (root / "rel_out").symlink_to("../outside")  # relative, climbing out
    (root / "rel_in").symlink_to("dir/file")  # relative, staying inside
    (root / "dangling").symlink_to("nowhere")
    (root / "swapped").symlink_to(outside)  # a parent swapped for a link after a check
    (root / "loop").symlink_to("loop")
    return root


# (path, flags, follow, expected errno or None when the open succeeds)
CASES = [
    ("dir/file", os.O_RDONLY, False, None),
    ("dir/sub/../file", os.O_RDONLY, False, None),  # ".." that stays beneath
    ("dir/sub", os.O_RDONLY | os.O_DIRECTORY, False, None),
    ("dir/", os.O_RDONLY, False, None),
    ("dir/file/", os.O_RDONLY, False, errno.ENOTDIR),
    ("dir/file/x", os.O_RDONLY, False, errno.ENOTDIR),
    ("dir/missing", os.O_RDONLY, False, errno.ENOENT),
    ("dir/new", os.O_WRONLY | os.O_CREAT | os.O_EXCL, False, None),
    ("../outside/secret", os.O_RDONLY, False, errno.EXDEV),  # ".." escape
    ("dir/../../outside/secret", os.O_RDONLY, False, errno.EXDEV),
    ("..", os.O_RDONLY | os.O_DIRECTORY, False, errno.EXDEV),
    ("/etc/hostname", os.O_RDONLY, False, errno.EXDEV),  # absolute path
    ("abs_out/secret", os.O_RDONLY, False, errno.ELOOP),  # symlink to outside, as a parent
    ("abs_out/secret", os.O_RDONLY, True, errno.EXDEV),
    ("rel_out/secret", os.O_RDONLY, False, errno.ELOOP),
    ("rel_out/secret", os.O_RDONLY, True, errno.EXDEV),
    ("swapped/secret", os.O_WRONLY | os.O_CREAT, False, errno.ELOOP),  # a symlinked parent swapped in
    ("swapped/secret", os.O_WRONLY | os.O_CREAT, True, errno.EXDEV),
    ("rel_in", os.O_RDONLY, False, errno.ELOOP),  # a link as the last component
    ("rel_in", os.O_RDONLY, True, None),
    ("rel_in", os.O_RDONLY | os.O_NOFOLLOW | os.O_PATH, False, None),  # the link itself, asked for
    ("dangling", os.O_WRONLY | os.O_CREAT, False, errno.ELOOP),  # create through a dangling link
    ("loop", os.O_RDONLY, True, errno.ELOOP),
    ("", os.O_RDONLY, False, errno.ENOENT),
]


def _answer(opener, root_fd: int, path: str, flags: int, follow: bool) -> tuple[int, int] | int:
    """(st_dev, st_ino) of what was opened, or the errno of the refusal."""
    try:
        fd = opener(root_fd, path, flags, 0o600, follow=follow)
    except OSError as exc:
        return exc.errno
    try:
        st = os.fstat(fd)
        return (st.st_dev, st.st_ino)
    finally:
        os.close(fd)


def _kernel(root_fd: int, path: str, flags: int, mode: int, *, follow: bool) -> int:
    return openat2.openat2(root_fd, path, flags, openat2.BENEATH if follow else openat2.NO_LINKS, mode)


@pytest.mark.parametrize("path, flags, follow, expected", CASES)
def test_the_walk_refuses_each_attack_with_the_errno_that_names_it(tree, path, flags, follow, expected):
    root_fd = os.open(tree, os.O_DIRECTORY | os.O_PATH)
    try:
        got = _answer(openat2.walk_beneath, root_fd, path, flags, follow)
    finally:
        os.close(root_fd)
    if expected is None:
        assert isinstance(got, tuple), errno.errorcode.get(got, got)  # type: ignore[arg-type]
    else:
        assert got == expected, got
    assert not (tree.parent / "outside" / "new").exists()


@needs_kernel
@pytest.mark.parametrize("path, flags, follow, expected", CASES)
def test_the_kernel_and_the_walk_give_the_same_answer(tree, tmp_path, path, flags, follow, expected):
    answers = []
    for opener in (_kernel, openat2.walk_beneath):
        root_fd = os.open(tree, os.O_DIRECTORY | os.O_PATH)
        try:
            answers.append(_answer(opener, root_fd, path, flags, follow))
        finally:
            os.close(root_fd)
            if flags & os.O_EXCL:
                (tree / path).unlink()  # each opener creates it afresh
    assert answers[0] == answers[1], answers
    assert answers[0] == expected if expected is not None else isinstance(answers[0], tuple)


def _magic_cases() -> list[tuple[str, bool]]:
    return [("proc/self/fd/{fd}", False), ("proc/self/fd/{fd}", True), ("proc/self/cwd", True), ("proc/self", False)]


@pytest.mark.parametrize("template, follow", _magic_cases())
def test_magic_links_are_refused_by_both(tree, template, follow):
    """/proc/self/fd/N names an object, not a path: ELOOP whether links are followed or not."""
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc here")
    target = os.open(tree.parent / "outside" / "secret", os.O_RDONLY)
    slash = os.open("/", os.O_DIRECTORY | os.O_PATH)
    try:
        path = template.format(fd=target)
        openers = [openat2.walk_beneath] + ([_kernel] if openat2.available() else [])
        answers = [_answer(opener, slash, path, os.O_RDONLY, follow) for opener in openers]
    finally:
        os.close(slash)
        os.close(target)
    assert answers == [errno.ELOOP] * len(answers), answers


def test_a_swap_between_check_and_open_is_refused(tree):
    """The parent was a directory when looked at, a link to outside when opened."""
    (tree / "later").mkdir()
    assert not os.path.islink(tree / "later")
    (tree / "later").rmdir()
    (tree / "later").symlink_to(tree.parent / "outside")
    root_fd = os.open(tree, os.O_DIRECTORY | os.O_PATH)
    try:
        with pytest.raises(OSError) as info:
            openat2.open_beneath(root_fd, "later/secret", os.O_WRONLY | os.O_TRUNC)
    finally:
        os.close(root_fd)
    assert info.value.errno == errno.ELOOP
    assert (tree.parent / "outside" / "secret").read_text() == "outside"


def test_open_in_refuses_a_directory_that_is_itself_a_link(tree):
    with pytest.raises(OSError) as info:
        openat2.open_in(tree / "abs_out", "secret", os.O_RDONLY)
    assert info.value.errno in (errno.ELOOP, errno.ENOTDIR)
    fd = openat2.open_in(tree / "dir", "file", os.O_RDONLY)
    try:
        assert os.read(fd, 100) == b"inside"
    finally:
        os.close(fd)


def test_open_nofollow_takes_absolute_paths_only_and_no_link_on_the_way(tree):
    fd = openat2.open_nofollow(str(tree / "dir" / "file"), os.O_RDONLY)
    os.close(fd)
    with pytest.raises(OSError) as info:
        openat2.open_nofollow(str(tree / "abs_out" / "secret"), os.O_RDONLY)
    assert info.value.errno == errno.ELOOP
    with pytest.raises(OSError) as info:
        openat2.open_nofollow("relative/path", os.O_RDONLY)
    assert info.value.errno == errno.EINVAL


def test_without_the_kernel_call_the_walk_answers(tree, monkeypatch):
    """Where openat2 is missing (or filtered), open_beneath is the walk, refusals and all."""
    monkeypatch.setattr(openat2, "available", lambda: False)
    root_fd = os.open(tree, os.O_DIRECTORY | os.O_PATH)
    try:
        with pytest.raises(OSError) as info:
            openat2.open_beneath(root_fd, "rel_out/secret", os.O_RDONLY, follow=True)
        assert info.value.errno == errno.EXDEV
        fd = openat2.open_beneath(root_fd, "dir/file", os.O_RDONLY)
        os.close(fd)
    finally:
        os.close(root_fd)
