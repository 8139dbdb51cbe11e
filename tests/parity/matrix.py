"""The parity matrix: path classes x operations, what the policy says of each cell, and
the differences between enforcing layers that are intended (one table, with reasons).

The policy of every layer is the same agent.yaml: ``read: [ro]``, ``write: [rw]``
(``runtime_fs_mode: read-write``), hugind's home beside the roots. Each layer gets
a fresh tree (operations change it) built by :func:`build_tree`; every cell has
objects of its own, so one cell's operation cannot decide another's answer.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ALLOW, DENY, NA = "allow", "deny", "n/a"

# What each class of path is, and which operations apply to it.
CLASSES: dict[str, tuple[str, ...]] = {
    "in_read": ("read", "write", "create", "rename_from", "rename_to", "remove", "link"),
    "in_write": ("read", "write", "create", "rename_from", "rename_to", "remove", "link"),
    "internal": ("read", "write", "create", "rename_from", "rename_to", "remove", "link"),
    "internal_parent": ("read", "create", "rename_from"),
    "outside": ("read", "write", "create", "rename_from", "rename_to", "remove", "link"),
    "symlink_in_to_out": ("read", "write", "rename_from", "rename_to", "remove"),
    "symlink_out_to_in": ("read", "write", "rename_from", "rename_to", "remove"),
    "hardlink_into_root": ("read", "write", "rename_from", "rename_to", "remove"),
    "hardlink_out_of_root": ("read", "write", "rename_from", "rename_to", "remove", "link"),
    "socket_in_root": ("connect", "rename_from", "remove"),
    "socket_outside": ("connect", "rename_from", "remove"),
    # A named socket outside the roots and outside /tmp (a session bus, a user systemd or
    # Docker socket live in such places): the view does not hide it the way a private /tmp does.
    "socket_elsewhere": ("connect", "rename_from", "remove"),
    "device": ("read", "write"),
}

_DENY_ALL = dict.fromkeys(CLASSES["outside"], DENY)
# The policy's answer for each cell: what every layer must say unless DIFFERENCES names it.
POLICY: dict[str, dict[str, str]] = {
    "in_read": {**_DENY_ALL, "read": ALLOW},
    "in_write": dict.fromkeys(CLASSES["in_write"], ALLOW),
    "internal": _DENY_ALL,
    "internal_parent": dict.fromkeys(CLASSES["internal_parent"], DENY),
    "outside": _DENY_ALL,
    # The entry is in the writable root, what it names is not: the entry may be moved or
    # removed (that changes the link, never its target), its target never opened.
    "symlink_in_to_out": {"read": DENY, "write": DENY, "rename_from": ALLOW, "rename_to": ALLOW, "remove": ALLOW},
    "symlink_out_to_in": dict.fromkeys(CLASSES["symlink_out_to_in"], DENY),
    # A file of the writable root whose inode is also outside: readable and movable,
    # never written (that would change the file outside too).
    "hardlink_into_root": {"read": ALLOW, "write": DENY, "rename_from": ALLOW, "rename_to": ALLOW, "remove": ALLOW},
    "hardlink_out_of_root": dict.fromkeys(CLASSES["hardlink_out_of_root"], DENY),
    "socket_in_root": dict.fromkeys(CLASSES["socket_in_root"], ALLOW),
    "socket_outside": dict.fromkeys(CLASSES["socket_outside"], DENY),
    "socket_elsewhere": dict.fromkeys(CLASSES["socket_elsewhere"], DENY),
    "device": {"read": DENY, "write": DENY},
}

LAYERS = ("fs", "wasi", "bwrap", "launcher")
CHILD_LAYERS = ("bwrap", "launcher")

# Intended differences: (layer, class, op) -> (that layer's answer, why). Nothing else may differ.
DIFFERENCES: dict[tuple[str, str, str], tuple[str, str]] = {}


def _differ(layers: tuple[str, ...], cls: str, ops: tuple[str, ...], answer: str, why: str) -> None:
    for layer in layers:
        for op in ops:
            DIFFERENCES[(layer, cls, op)] = (answer, why)


for _cls in CLASSES:
    _differ(("fs",), _cls, ("link", "connect"), NA, "fs.* has no hard-link and no socket operation")
    _differ(("wasi",), _cls, ("connect",), NA, "WASI preview 1 cannot connect to a named socket")
_differ(
    ("fs",),
    "symlink_out_to_in",
    ("read", "write"),
    ALLOW,
    "fs.* resolves the path the guest names before checking it: a link from outside "
    "into a root names that root's file, which the guest may reach directly anyway",
)
_differ(
    ("wasi",),
    "in_write",
    ("link",),
    DENY,
    "WASI path_link is always refused (the hard-link rule: fs.* cannot make links either)",
)
_differ(
    CHILD_LAYERS,
    "hardlink_into_root",
    ("write",),
    ALLOW,
    "the kernel lets a child write a file with several links inside a writable root; "
    "only fs.* and WASI can check the link count before writing",
)
_differ(
    CHILD_LAYERS,
    "device",
    ("read", "write"),
    ALLOW,
    "children get a private /dev (null, zero, urandom...) to run programs; agents get none",
)


def expected(layer: str, cls: str, op: str) -> tuple[str, str]:
    """(answer, why) for one cell of one layer."""
    if (layer, cls, op) in DIFFERENCES:
        return DIFFERENCES[(layer, cls, op)]
    return POLICY[cls][op], "the policy"


@dataclass(frozen=True)
class Cell:
    cls: str
    op: str
    path: str  # host path of the object the operation is about
    other: str = ""  # rename/link: the other end, in the writable root

    @property
    def id(self) -> str:
        return f"{self.cls}:{self.op}"


@dataclass
class Tree:
    top: Path
    agent: Path
    home: Path
    elsewhere: Path | None = None  # a private dir outside /tmp (for socket_elsewhere)
    cells: list[Cell] = field(default_factory=list)
    sockets: list[socket.socket] = field(default_factory=list)

    def close(self) -> None:
        for sock in self.sockets:
            sock.close()
        if self.elsewhere is not None:
            shutil.rmtree(self.elsewhere, ignore_errors=True)


def _file(path: Path, text: str = "data") -> str:
    path.write_text(text)
    return str(path)


def _listening(tree: Tree, path: Path) -> str:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.listen(16)
    tree.sockets.append(sock)
    return str(path)


def build_tree(top: Path) -> Tree:
    """A fresh tree under ``top``: agent root with ``ro``/``rw``, ``out`` beside it, hugind's
    home beside it (``HUGIND_HOME`` must point there), and one set of objects per cell."""
    agent, home = top / "agent", top / "home"
    ro, rw, out = agent / "ro", agent / "rw", top / "out"
    for d in (ro, rw, out, home / "sessions"):
        d.mkdir(parents=True)
    (home / "config.yaml").write_text("api_key: sk-parity\n")
    # Outside /tmp (which children see as a private dir of their own): the user's home.
    elsewhere = Path(tempfile.mkdtemp(prefix=".hugind-parity-", dir=Path.home()))
    tree = Tree(top, agent, home, elsewhere)
    for cls, ops in CLASSES.items():
        for op in ops:
            tree.cells.append(_cell(tree, cls, op, ro, rw, out))
    return tree


def _cell(tree: Tree, cls: str, op: str, ro: Path, rw: Path, out: Path) -> Cell:
    tag = f"{cls}-{op}"
    home = tree.home
    if op == "create":
        where = {"in_read": ro, "in_write": rw, "internal": home / "sessions", "internal_parent": home, "outside": out}
        return Cell(cls, op, str(where[cls] / f"new-{tag}"))
    if cls == "in_read":
        path = _file(ro / tag)
    elif cls == "in_write":
        path = _file(rw / tag)
    elif cls == "internal":
        path = str(home / "config.yaml")
    elif cls == "internal_parent":
        path = str(home)
    elif cls == "outside":
        path = _file(out / tag)
    elif cls == "symlink_in_to_out":
        os.symlink(_file(out / f"target-{tag}"), rw / tag)
        path = str(rw / tag)
    elif cls == "symlink_out_to_in":
        os.symlink(_file(rw / f"target-{tag}"), out / tag)
        path = str(out / tag)
    elif cls == "hardlink_into_root":
        os.link(_file(out / f"twin-{tag}"), rw / tag)
        path = str(rw / tag)
    elif cls == "hardlink_out_of_root":
        os.link(_file(rw / f"twin-{tag}"), out / tag)
        path = str(out / tag)
    elif cls == "socket_in_root":
        path = _listening(tree, rw / f"s-{op}")
    elif cls == "socket_outside":
        path = _listening(tree, out / f"s-{op}")
    elif cls == "socket_elsewhere":
        assert tree.elsewhere is not None
        path = _listening(tree, tree.elsewhere / f"s-{op}")
    elif cls == "device":
        path = "/dev/null"
    else:  # pragma: no cover - a class without a builder
        raise AssertionError(cls)
    other = ""
    if op == "rename_from":
        other = str(rw / f"moved-{tag}")
    elif op == "rename_to":
        other, path = path, _file(rw / f"source-{tag}")  # the source is ours; the target is the class
    elif op == "link":
        other = str(rw / f"linked-{tag}")
    return Cell(cls, op, path, other)
