"""Filesystem decisions: resolve a guest path, then check it against the roots.

Paths are resolved the way ``os.path.realpath`` does (symlinks, ``..``,
trailing slashes; a path that does not exist yet is resolved through its
nearest existing parent) before anything is compared, and containment is
decided on path components (``/data`` does not contain ``/data-evil``).
``/proc``, ``/sys`` and ``/dev`` are off limits unless a root lies inside
them. Operations that act on a directory entry rather than on what it points
to (``remove``, ``rename``, ``lstat``) resolve only the parent, so removing a
symlink removes the link, never its target.

Every check resolves its path anew (a decision is never cached: a symlink
may have been swapped since the last one). What a run does cache is the
string form of its roots (``FsView``), since comparing strings costs a tiny
fraction of ``PurePath.is_relative_to``.
"""

from __future__ import annotations

import os
from pathlib import Path

from hugind.policy.boundary import SCRATCH_SPEC, SPECIAL_DIRS, Boundary, within
from hugind.policy.model import Denied, FsRoot

MAX_PATH_BYTES = 4096
MAX_NAME_BYTES = 255
ENTRY_OPS = frozenset({"remove", "rename", "lstat"})  # act on the entry, not its target
ROOT_PROTECTED_OPS = frozenset({"remove", "rename"})
# Reads that take a whole tree with them: like a write, refused on a parent of hugind's files.
TREE_READ_OPS = frozenset({"copy"})
# The compiled boundary is the view of the roots every check reads (the old name stays).
FsView = Boundary

__all__ = [
    "ENTRY_OPS",
    "SCRATCH_SPEC",
    "SPECIAL_DIRS",
    "FsView",
    "decide_fs",
    "decide_read_held",
    "may_write",
    "within",
]


def _op_name(op: str) -> str:
    return op.removeprefix("fs.")


def check_syntax(path: object) -> str:
    if not isinstance(path, str) or not path:
        raise Denied("filesystem.path-syntax", "filesystem: path must be a non-empty string")
    if "\0" in path:
        raise Denied("filesystem.path-syntax", "filesystem: path contains a NUL byte")
    try:
        encoded = path.encode("utf-8")
    except UnicodeEncodeError:
        raise Denied("filesystem.path-syntax", "filesystem: path is not valid Unicode") from None
    if len(encoded) > MAX_PATH_BYTES:
        raise Denied("filesystem.path-syntax", f"filesystem: path longer than {MAX_PATH_BYTES} bytes")
    if len(encoded) > MAX_NAME_BYTES and any(len(part.encode("utf-8")) > MAX_NAME_BYTES for part in path.split("/")):
        raise Denied("filesystem.path-syntax", f"filesystem: path component over {MAX_NAME_BYTES} bytes")
    return path


_O_PATH = getattr(os, "O_PATH", 0)
_fd_links = _O_PATH != 0 and os.path.isdir("/proc/self/fd")


def _open_canonical(path: str) -> tuple[str, int] | None:
    """(canonical path, ``O_PATH`` fd) of what ``path`` names now, or None.

    An object the kernel opens has one canonical path, the one ``realpath``
    computes by hand (an ``lstat`` per component): opened ``O_PATH`` (no read,
    no side effect) its fd's link in ``/proc/self/fd`` names it. None when the
    kernel cannot say in one open: a path that does not exist yet, a loop, a
    denied directory, no ``/proc``, a file unlinked meanwhile."""
    if not _fd_links:
        return None
    try:
        fd = os.open(path, _O_PATH | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        real = ""
    if real.startswith("/") and not real.endswith(" (deleted)"):
        return real, fd
    os.close(fd)
    return None


def _canonical_absent(path: str) -> str | None:
    """The real path of a name that does not exist in a directory that does.

    Checking for a file that is not there is common (``fs.exists``), and
    ``os.path.realpath`` pays an ``lstat`` per component for it. The answer is
    the directory's canonical path plus the name, once ``lstat`` says there is
    nothing at all under that name (a dangling symlink is something: None)."""
    head, tail = os.path.split(path)
    if tail in ("", ".", ".."):
        return None
    held = _open_canonical(head)
    if held is None:
        return None
    real_head, fd = held
    try:
        os.stat(tail, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return f"{real_head.rstrip('/')}/{tail}"
    except OSError:
        return None
    finally:
        os.close(fd)
    return None  # it exists after all (a dangling link, or made meanwhile): realpath decides


def _realpath(path: str) -> str:
    """``os.path.realpath(path)``, asked of the kernel when it can answer in one or two opens."""
    held = _open_canonical(path)
    if held is not None:
        os.close(held[1])
        return held[0]
    return _realpath_unopened(path)


def _realpath_unopened(path: str) -> str:
    """``os.path.realpath`` of a path the kernel could not open as a whole."""
    absent = _canonical_absent(path)
    return absent if absent is not None else os.path.realpath(path)


def _unstable(path: str, exc: OSError) -> Denied:
    # The tree changed while it was being resolved (a link removed or
    # swapped mid-walk): refuse, on the record, rather than guess.
    return Denied("filesystem.unstable", f"filesystem: '{path}' changed while it was being resolved ({exc.strerror})")


def resolve(path: str, cwd: Path, *, follow_last: bool = True) -> Path:
    """The host path ``path`` denotes, symlinks resolved (all, or all but the last)."""
    joined = os.path.join(cwd, path)
    head, tail = os.path.split(joined)
    try:
        if follow_last or tail in ("", ".", ".."):
            return Path(_realpath(joined))
        return Path(_realpath(head)) / tail
    except OSError as exc:
        raise _unstable(path, exc) from None


def _join(cwd: str, path: str) -> str:
    """``os.path.join(cwd, path)`` for two strings, without its generic checks (it runs on every call)."""
    if path.startswith("/"):
        return path
    return cwd + path if not cwd or cwd.endswith("/") else f"{cwd}/{path}"


def resolve_held(path: str, cwd: Path | str) -> tuple[str, int | None]:
    """``str(resolve(path, cwd))`` plus an ``O_PATH`` fd of the object it names, which
    the caller closes; the fd is None when nothing exists there (yet)."""
    joined = _join(cwd, path) if isinstance(cwd, str) else os.path.join(cwd, path)
    held = _open_canonical(joined)
    if held is not None:
        return held
    try:  # the open that just failed is not tried again
        return _realpath_unopened(joined), None
    except OSError as exc:
        raise _unstable(path, exc) from None


def _root_of(real: str, roots: tuple[tuple[str, FsRoot], ...]) -> FsRoot | None:
    """The innermost root containing ``real`` (roots given with their string form)."""
    best: FsRoot | None = None
    for text, root in roots:
        if within(real, text) and (best is None or len(root.path.parts) > len(best.path.parts)):
            best = root
    return best


def _forbidden(view: Boundary, real: str, root: FsRoot | None, tree: bool) -> str | None:
    """Why ``real`` is off limits whatever the roots say: "internal", a special dir, or None.

    hugind's own files are off limits, and with ``tree`` (an op that moves,
    removes, writes or copies a whole entry) so is every parent of one: renaming
    a parent would carry the file out to where the roots reach it. Asked only inside a
    root: the boundary refuses every root that overlaps one of these files, so this
    is the second line (outside every root, "outside the roots" is the answer)."""
    if root is not None:
        for d in view.internal_strs:
            if within(real, d) or (tree and within(d, real)):
                return "internal"
    specials = view.special_strs
    if real.startswith(specials):
        for special in specials:
            if within(real, special) and (root is None or not within(str(root.path), special)):
                return special
    return None


def _specs(roots: tuple[FsRoot, ...]) -> str:
    return ", ".join(dict.fromkeys(r.spec for r in roots)) or "none configured"


def _precheck(view: FsView, op: str, path: str, write: bool) -> str:
    """What can be decided before resolving: the path's syntax and the fs mode; the op's short name."""
    name = _op_name(op)
    check_syntax(path)
    mode = view.policy.mode
    if mode == "none":
        raise Denied("filesystem.mode", f"filesystem: {name} {path!r} denied: runtime_fs_mode is none")
    if write and mode == "read-only":
        raise Denied("filesystem.read-only", f"filesystem: {name} {path!r} denied: runtime_fs_mode read-only")
    return name


def _rule_for(view: FsView, name: str, path: str, real_str: str, write: bool) -> str:
    """The rule allowing ``name`` on the resolved ``real_str``, or Denied."""
    roots = view.writable_strs if write else view.readable_strs
    root = _root_of(real_str, roots)
    forbidden = _forbidden(view, real_str, root, write or name in TREE_READ_OPS)
    if forbidden is None and root is not None and name not in ROOT_PROTECTED_OPS:
        return f"filesystem.{'write' if write else 'read'}:{root.spec}"  # allowed: no message to build
    shown = repr(path)
    if forbidden == "internal":
        raise Denied(
            "filesystem.internal",
            f"filesystem: {name} {shown} denied: hugind's own files (cache, engine, backend config, saved "
            "sessions, audit log) and their parents are never reachable",
        )
    if forbidden is not None:
        raise Denied(
            "filesystem.special",
            f"filesystem: {name} {shown} denied: {forbidden} is off limits unless listed explicitly",
        )
    if root is None:
        kind = "writable" if write else "readable"
        raise Denied(
            "filesystem.outside-roots",
            f"filesystem: {name} {shown} denied: outside the {kind} roots ({_specs(tuple(r for _, r in roots))})",
        )
    if name in ROOT_PROTECTED_OPS and real_str == str(root.path):
        raise Denied("filesystem.root", f"filesystem: {name} {shown} denied: it is the allowed root itself")
    return f"filesystem.{'write' if write else 'read'}:{root.spec}"


def decide_fs(view: FsView, op: str, path: str, *, write: bool) -> tuple[Path, str]:
    """Resolve and check; return (real host path, deciding rule) or raise Denied."""
    name = _precheck(view, op, path, write)
    real = resolve(path, view.cwd, follow_last=name not in ENTRY_OPS)
    return real, _rule_for(view, name, path, str(real), write)


def decide_read_held(view: FsView, op: str, path: str) -> tuple[str, str, int | None]:
    """``decide_fs`` for a read of what ``path`` points to (its real path as a string),
    also handing over an
    ``O_PATH`` fd of the very object decided on (None when nothing exists there).

    Acting through that fd (``fstat``) needs no second walk and leaves no window
    between the decision and the act: a symlink swapped in after the check
    changes nothing, as the fd already names the object that was checked."""
    name = _precheck(view, op, path, False)
    if name in ENTRY_OPS:
        raise ValueError(f"{op} acts on the entry, not on what it points to")
    real, fd = resolve_held(path, view.cwd_str)
    try:
        return real, _rule_for(view, name, path, real, False), fd
    except BaseException:
        if fd is not None:
            os.close(fd)
        raise


def may_write(view: FsView, real: Path) -> bool:
    """Whether an already-resolved path lies in a writable root (no special dir)."""
    text = str(real)
    root = _root_of(text, view.writable_strs)
    return root is not None and _forbidden(view, text, root, True) is None
