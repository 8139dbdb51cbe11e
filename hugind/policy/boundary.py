"""The filesystem policy of one run, compiled once into the value every enforcer reads.

``agent.yaml``'s ``filesystem`` section (roots and mode), the run's working
directory and scratch dir, and hugind's own files become one frozen
:class:`Boundary`. Each enforcing layer is a pure function of it:

* ``fs.*`` decisions: :mod:`hugind.policy.fs`;
* WASI preopens: :mod:`hugind.sandbox.preopens`;
* a child's view (bubblewrap binds, Landlock rules): :mod:`hugind.confine.plan`.

What differs between layers on purpose is a named field here, never a
constant of one layer: ``special`` (``/proc``, ``/sys``, ``/dev``, closed to
``fs.*`` and WASI unless a root lies inside), ``child_system`` (what a program
needs to run: children read it, agents do not) and ``child_etc_hidden``.

hugind's own files (``internal``: its cache, its engine, the user's backend
config and saved sessions, the audit log) are kept out **by construction**: a
policy whose root contains one of them, or lies inside one, is refused before
the run (:func:`refuse_conflicts`), so no layer can ever name one or a parent
of one. ``fs.*`` still checks every path it acts on against them, ancestors
included, as a second line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from hugind.errors import UsageError
from hugind.paths import internal_dirs
from hugind.policy.model import FsPolicy, FsRoot

SPECIAL_DIRS: tuple[Path, ...] = (Path("/proc"), Path("/sys"), Path("/dev"))
# What a child needs to run a program: read-only, whatever the policy says.
CHILD_SYSTEM_DIRS: tuple[str, ...] = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Files under /etc that hold secrets a child never needs (root-run hugind's
# children could otherwise read them: they keep the caller's uid).
CHILD_ETC_HIDDEN: tuple[str, ...] = (
    "shadow",
    "shadow-",
    "gshadow",
    "gshadow-",
    "sudoers",
    "sudoers.d",
    "ssh",
    "ssl/private",
    "security/opasswd",
    "krb5.keytab",
    ".pwd.lock",
)
SCRATCH_SPEC = "<scratch>"


def within(path: str, root: str) -> bool:
    """``PurePosixPath(path).is_relative_to(root)`` for normalized absolute paths
    (``str`` of a ``Path``), decided on components: ``/data`` does not contain ``/data-evil``."""
    if path.startswith("//") or root.startswith("//"):
        # POSIX keeps a leading "//" as a root of its own: let pathlib decide those.
        return Path(path).is_relative_to(root)
    return path == root or path.startswith(root if root.endswith("/") else root + "/")


def overlaps(a: str, b: str) -> bool:
    """One path contains the other (or they are the same)."""
    return within(a, b) or within(b, a)


@dataclass(frozen=True)
class Boundary:
    """The compiled filesystem policy of one run (the scratch dir exists only in scratch mode)."""

    policy: FsPolicy
    cwd: Path
    scratch: Path | None = None
    # hugind's own files, resolved: no layer may reach them or a parent of them.
    internal: tuple[Path, ...] = field(default_factory=tuple)
    # Closed to fs.* and WASI unless a root lies inside them (children get their own /dev, /proc).
    special: tuple[Path, ...] = SPECIAL_DIRS
    # Read-only for children only: the programs they run need them.
    child_system: tuple[str, ...] = CHILD_SYSTEM_DIRS
    child_etc: str = "/etc"
    child_etc_hidden: tuple[str, ...] = CHILD_ETC_HIDDEN

    @property
    def mode(self) -> str:
        return self.policy.mode

    @property
    def readable(self) -> tuple[FsRoot, ...]:
        if self.policy.mode == "none":
            return ()
        extra = (FsRoot(SCRATCH_SPEC, self.scratch),) if self.scratch else ()
        return self.policy.read + self.policy.write + extra

    @property
    def writable(self) -> tuple[FsRoot, ...]:
        if self.policy.mode == "read-write":
            return self.policy.write
        if self.policy.mode == "scratch" and self.scratch:
            return (FsRoot(SCRATCH_SPEC, self.scratch),)
        return ()

    @cached_property
    def readable_strs(self) -> tuple[tuple[str, FsRoot], ...]:
        return tuple((str(r.path), r) for r in self.readable)

    @cached_property
    def writable_strs(self) -> tuple[tuple[str, FsRoot], ...]:
        return tuple((str(r.path), r) for r in self.writable)

    @cached_property
    def internal_strs(self) -> tuple[str, ...]:
        return tuple(str(d) for d in self.internal)

    @cached_property
    def special_strs(self) -> tuple[str, ...]:
        return tuple(str(d) for d in self.special)

    @cached_property
    def cwd_str(self) -> str:
        return str(self.cwd)

    def guest_view(self, real: Path) -> str:
        """How the guest should see a checked path: relative to its cwd, else absolute."""
        text, cwd = str(real), self.cwd_str
        if text == cwd:
            return "."
        if within(text, cwd):
            return str(real.relative_to(self.cwd))
        return text

    def internal_overlap(self, real: str) -> str | None:
        """The internal path ``real`` lies in, or is an ancestor of; None if unrelated."""
        for d in self.internal_strs:
            if overlaps(real, d):
                return d
        return None

    def child_etc_secrets(self) -> tuple[str, ...]:
        """The hidden ``/etc`` entries this machine has (a child cannot be shown what is not there)."""
        base = self.child_etc.rstrip("/")
        return tuple(f"{base}/{name}" for name in self.child_etc_hidden if os.path.lexists(f"{base}/{name}"))


def internal_paths(audit_path: Path | str | None = None) -> tuple[Path, ...]:
    """hugind's own files for this run: ``paths.internal_dirs()`` plus the audit log."""
    found = internal_dirs()
    if audit_path is not None:
        found = (*found, Path(os.path.realpath(audit_path)))
    return found


def compile_boundary(policy: FsPolicy, cwd: Path, scratch: Path | None, internal: tuple[Path, ...]) -> Boundary:
    """The run's boundary; refuses (``BoundaryConflict``) a root that overlaps an internal path."""
    refuse_conflicts(policy, internal)
    return Boundary(policy, cwd, scratch, internal)


class BoundaryConflict(UsageError):
    """A root of the policy contains one of hugind's own files, or lies inside one."""


def conflicts(policy: FsPolicy, internal: tuple[Path, ...]) -> list[tuple[FsRoot, Path]]:
    """(root, internal path) pairs where one contains the other (mode ``none`` has no roots)."""
    if policy.mode == "none":
        return []
    found = []
    for root in (*policy.read, *policy.write):
        for path in internal:
            if overlaps(str(root.path), str(path)):
                found.append((root, path))
    return found


def _advice(path: Path) -> str:
    """How the user moves ``path`` out of the roots."""
    from hugind.paths import cache_root, engine_dir, hugind_home

    def real(p: Path) -> Path:
        return Path(os.path.realpath(p))

    if path == real(cache_root()):
        return "set HUGIND_CACHE_DIR (or XDG_CACHE_HOME) to a directory outside the roots"
    if path == real(engine_dir()):
        return "install hugind outside the roots"
    if path.parent == real(hugind_home()):
        return "set HUGIND_HOME to a directory outside the roots"
    return "write the audit log (--audit) outside the roots"


def refuse_conflicts(policy: FsPolicy, internal: tuple[Path, ...]) -> None:
    """Raise ``BoundaryConflict`` (exit 2) naming the root and hugind's path it overlaps."""
    found = conflicts(policy, internal)
    if not found:
        return
    root, path = found[0]
    where = "contains" if within(str(path), str(root.path)) else "lies inside"
    raise BoundaryConflict(
        f"filesystem root '{root.spec}' ({root.path}) {where} hugind's own {path}, which no agent or "
        f"child may reach: {_advice(path)}, or list narrower roots"
    )
