"""Properties of the filesystem policy (``decide_fs``) on a real tree with hostile links.

The tree holds a readable root with a writable root nested inside it, a
writable root, a read-only root, a decoy sibling (``data-evil``), and links
that lead out (absolute, relative, dangling, loops, into ``/proc``, ``/dev``
and hugind's own dirs). Guest paths are generated from those names, ``..``,
``.``, empty components, trailing slashes, NUL, over-long components and
arbitrary text, relative or absolute. Whatever comes in: only ``Denied`` comes
out, and an allowed path, once resolved, lies inside a root of the right kind
by components, outside the special and internal dirs.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import hugind.host.fs as host_fs
from hugind.paths import cache_root, engine_dir, internal_dirs
from hugind.policy.fs import ENTRY_OPS, ROOT_PROTECTED_OPS, FsView, decide_fs, decide_read_held
from hugind.policy.model import Denied, FsPolicy, FsRoot
from tests.fuzz.profiles import scaled


def _host_policy_ops() -> frozenset[str]:
    """The op names ``hugind/host/fs.py`` hands the policy as literals (``check_fs("lstat", ...)``),
    read from its source: an op the host starts asking about is drawn here on arrival. (The
    others pass their own registry name through, ``_read(ctx, path, "read_text")``.)"""
    names = set()
    for node in ast.walk(ast.parse(Path(host_fs.__file__).read_text())):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("check_fs", "check_read_held")
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names.add(node.args[0].value)
    return frozenset(names)


# Every op the guest can call (the registry), every name the host passes the policy, and
# every name the policy itself branches on: the domain is the code's, not a list kept here.
HOST_POLICY_OPS = _host_policy_ops()
FS_OPS = tuple(
    sorted({op.name for op in host_fs.OPS} | {f"fs.{n}" for n in HOST_POLICY_OPS | ENTRY_OPS | ROOT_PROTECTED_OPS})
)
# Stated here, not imported, so a change to the module's own list cannot pass unnoticed.
SPECIAL = (Path("/proc"), Path("/sys"), Path("/dev"))


@dataclass(frozen=True)
class Tree:
    base: Path
    agent: Path
    scratch: Path

    def root(self, spec: str) -> FsRoot:
        return FsRoot(spec, Path(os.path.realpath(self.agent / spec)))

    def view(self, mode: str, *, slash: bool = False) -> FsView:
        """The policy of the test tree; ``slash``: ``/`` itself is the read root."""
        read = (FsRoot("/", Path("/")),) if slash else (self.root("data"), self.root("ro"))
        policy = FsPolicy(mode=mode, read=read, write=(self.root("out"), self.root("data/w")))
        # hugind's own files as a run's boundary holds them: a "/" root contains them, which
        # a run refuses before it starts; the decisions below are the second line inside it.
        internal = tuple(internal_dirs())
        return FsView(policy, self.agent, self.scratch if mode == "scratch" else None, internal)


def _link(target: str | Path, at: Path) -> None:
    os.symlink(target, at)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Tree:
    base = Path(os.path.realpath(tmp_path_factory.mktemp("fuzz-fs")))
    agent, outside, scratch = base / "agent", base / "outside", base / "scratch"
    for d in ("data/sub", "data/w", "out", "ro", "data-evil"):
        (agent / d).mkdir(parents=True)
    outside.mkdir()
    scratch.mkdir()
    (outside / "secret.txt").write_text("secret")
    for f in ("data/readme.txt", "data/sub/deep.txt", "out/mine.txt", "ro/file.txt", "data-evil/x", "notes.txt"):
        (agent / f).write_text("x")
    data, out = agent / "data", agent / "out"
    _link("../../outside/secret.txt", data / "link_out")
    _link(outside, data / "abs_out")
    _link("loop", data / "loop")
    _link("loop_b", data / "loop_a")
    _link("loop_a", data / "loop_b")
    _link("/proc/self", data / "proc")
    _link("/dev", data / "dev")
    _link(engine_dir(), data / "internal")
    _link(cache_root(), data / "cache")
    _link("..", data / "up")
    _link("../out", data / "to_out")
    _link("../ro", data / "to_ro")
    _link("w", data / "to_w")
    _link("../data", out / "back")
    _link("/etc", out / "escape")
    _link("../ro", out / "ro_link")
    _link("../data-evil", out / "evil")
    _link(outside / "missing.txt", out / "dangling_out")
    _link("../data/w", out / "to_w")
    return Tree(base, agent, scratch)


NAMES = (
    "data",
    "out",
    "ro",
    "w",
    "sub",
    "readme.txt",
    "deep.txt",
    "mine.txt",
    "file.txt",
    "link_out",
    "abs_out",
    "loop",
    "loop_a",
    "proc",
    "dev",
    "internal",
    "cache",
    "up",
    "to_out",
    "to_ro",
    "to_w",
    "back",
    "escape",
    "ro_link",
    "evil",
    "dangling_out",
    "data-evil",
    "outside",
    "secret.txt",
    "agent",
    "scratch",
    "new.txt",
    "self",
    "root",
    "cwd",
    "fd",
    "environ",
    "status",
    "etc",
    "passwd",
    "hugind",
    "_engine",
    "..",
    "..",
    ".",
    "",
)
COMPONENT = st.one_of(
    st.sampled_from(NAMES),
    st.text(max_size=6),
    st.just("a" * 256),  # over the 255-byte component limit
    st.just("é" * 128),  # 256 bytes in UTF-8, 128 characters
    st.just("\0"),
)


@st.composite
def guest_path(draw: st.DrawFn, tree: Tree) -> str:
    prefixes = (
        "",
        "",
        "./",
        "/",
        "//",
        f"{tree.agent}/",
        f"{tree.base}/",
        f"{tree.agent}/data/../",
        "/proc/",
        "/proc/self/",
        "/sys/",
        "/dev/",
        "/etc/",
        f"{engine_dir()}/",
        f"{cache_root()}/",
        f"{tree.scratch}/",
    )
    body = "/".join(draw(st.lists(COMPONENT, max_size=6)))
    return draw(st.sampled_from(prefixes)) + body + draw(st.sampled_from(("", "", "/", "/.", "//")))


def _inside(path: Path, root: Path) -> bool:
    """Containment by components, computed without Path.is_relative_to."""
    return path.parts[: len(root.parts)] == root.parts


def _check_allowed(view: FsView, op: str, path: str, write: bool, real: Path, rule: str) -> None:
    name = op.removeprefix("fs.")
    assert real.is_absolute() and ".." not in real.parts and str(real) == os.path.normpath(str(real))
    # Resolved before it was checked: no link is left on the way (entry ops keep the last name).
    resolved = real.parent if name in ENTRY_OPS and real.parent != real else real
    assert os.path.realpath(resolved) == str(resolved), f"{path!r} -> {real} was not fully resolved"
    roots = view.writable if write else view.readable
    kind, _, spec = rule.partition(":")
    assert kind == ("filesystem.write" if write else "filesystem.read")
    matching = [r for r in roots if r.spec == spec and _inside(real, r.path)]
    assert matching, f"{path!r} -> {real} is outside every {'writable' if write else 'readable'} root ({rule})"
    root = max(matching, key=lambda r: len(r.path.parts))
    if write:
        assert view.policy.mode in ("read-write", "scratch")
        assert root in view.writable
    for special in SPECIAL:
        assert not _inside(real, special) or _inside(root.path, special), f"{path!r} -> {real} in {special}"
    for internal in internal_dirs():
        assert not _inside(real, internal), f"{path!r} -> {real} is hugind's own {internal}"
    if name in ("remove", "rename"):
        assert real != root.path


def _decide(view: FsView, op: str, path: object, write: bool, held: bool = False) -> tuple[Path, str] | Denied:
    """``decide_fs``, or with ``held`` the fd-holding read check (``fs.exists``, ``fs.is_file``)."""
    try:
        if held and not write and op.removeprefix("fs.") not in ENTRY_OPS:
            real, rule, fd = decide_read_held(view, op, path)  # type: ignore[arg-type]
            if fd is not None:
                os.close(fd)
            return Path(real), rule
        return decide_fs(view, op, path, write=write)  # type: ignore[arg-type]
    except Denied as denied:
        return denied


MODES = ("read-write", "read-only", "scratch", "none")


def test_the_drawn_ops_are_the_codes_own() -> None:
    """The scan of the host module works (it finds ``lstat``, which no registry op is named),
    and every op name the policy branches on is drawn."""
    assert {"lstat", "list_dir"} <= HOST_POLICY_OPS
    short = {op.removeprefix("fs.") for op in FS_OPS}
    assert short >= ENTRY_OPS | ROOT_PROTECTED_OPS | HOST_POLICY_OPS
    assert {op.name for op in host_fs.OPS} <= set(FS_OPS)


@settings(max_examples=scaled(500))
@given(st.data(), st.sampled_from(MODES), st.sampled_from(FS_OPS), st.booleans(), st.booleans(), st.booleans())
def test_allowed_paths_stay_inside_their_roots(
    tree: Tree, data: st.DataObject, mode: str, op: str, write: bool, held: bool, slash: bool
) -> None:
    path = data.draw(guest_path(tree), label="path")
    view = tree.view(mode, slash=slash)
    outcome = _decide(view, op, path, write, held)
    again = _decide(view, op, path, write, held)
    if isinstance(outcome, Denied):
        assert isinstance(again, Denied) and (again.rule, again.message) == (outcome.rule, outcome.message)
        if mode == "none":
            assert outcome.rule in ("filesystem.mode", "filesystem.path-syntax")
        return
    assert again == outcome, "decisions must be deterministic"
    assert mode != "none" and not (write and mode == "read-only")
    _check_allowed(view, op, path, write, *outcome)


@settings(max_examples=scaled(200))
@given(
    st.data(),
    st.sampled_from(("ro", "out/ro_link", "data/to_ro", "data/up/ro", "out/back/to_ro", "out/back/up/ro")),
    st.sampled_from(FS_OPS),
)
@example(data=None, via="out/ro_link", op="fs.write_text")  # type: ignore[arg-type]
def test_read_only_root_is_never_writable(tree: Tree, data: st.DataObject | None, via: str, op: str) -> None:
    """Whatever link or ``..`` leads into ``ro``, nothing under it is written."""
    tail = data.draw(st.lists(st.sampled_from(("file.txt", "new", "..", ".", "")), max_size=3)) if data else []
    path = "/".join([via, *tail])
    # remove/rename act on the entry itself (removing out/ro_link removes the link, not ro).
    head, last = os.path.split(os.path.join(tree.agent, path))
    entry = op.removeprefix("fs.") in ENTRY_OPS and last not in ("", ".", "..")
    real = os.path.join(os.path.realpath(head), last) if entry else os.path.realpath(os.path.join(tree.agent, path))
    for mode in ("read-write", "scratch"):
        outcome = _decide(tree.view(mode), op, path, True)
        if _inside(Path(real), tree.root("ro").path):
            assert isinstance(outcome, Denied), f"{path!r} ({real}) writable under {mode}"


@settings(max_examples=scaled(300))
@given(
    st.one_of(
        st.none(),
        st.integers(),
        st.binary(max_size=10),
        st.lists(st.text(max_size=3), max_size=2),
        st.text(st.characters(), max_size=20),  # surrogates included
        st.text(max_size=5).map(lambda t: t + "/" * 5000),
        st.integers(1, 300).map(lambda n: "/".join(["x"] * n) * 10),
    ),
    st.sampled_from(FS_OPS),
    st.sampled_from(MODES),
    st.booleans(),
    st.booleans(),
)
@example("\udcff", "fs.read_text", "read-write", False, False)
@example("data/\0/x", "fs.read_text", "read-write", False, True)
def test_any_input_is_only_ever_denied(tree: Tree, path: object, op: str, mode: str, write: bool, held: bool) -> None:
    outcome = _decide(tree.view(mode), op, path, write, held)
    if not isinstance(outcome, Denied):
        assert isinstance(path, str)
        _check_allowed(tree.view(mode), op, path, write, *outcome)
    elif not isinstance(path, str) or not path or "\0" in path:
        assert outcome.rule == "filesystem.path-syntax"
