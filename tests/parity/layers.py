"""Each enforcing layer asked every cell of a tree, answering allow / deny / error.

* ``fs``: the ``fs.*`` host ops of a real policy engine (the op layer every JS and
  raw-wasm agent calls);
* ``wasi``: a raw WASI command module built with zig, run as an agent;
* ``bwrap`` / ``launcher``: a Python probe run as a confined child of a real JS
  agent (``spawn``), in each confinement mode.

A cell's answer is "deny" only for a **specific refusal**: a ``PermissionDenied``
the audit log records (fs.*), or an errno that means "refused" or "not in your
view" (WASI and children). Anything else (the probe never reached the operation,
an unrelated error) is an "error" answer, which no expectation accepts.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from hugind.errors import HostCallError, PermissionDenied
from hugind.host import fs
from hugind.host.registry import HostContext
from hugind.policy import PolicyEngine, build_policy
from tests.parity.matrix import ALLOW, DENY, Cell, Tree
from tests.redteam.helpers import js, run_attack
from tests.runtime.helpers import run_captured

PERMISSIONS = {"filesystem": {"read": ["ro"], "write": ["rw"]}}
OPS = {op.name: op for op in fs.OPS}

# WASI preview 1 errno values that mean "refused" or "not in this view".
WASI_REFUSALS = {2: "EACCES", 44: "ENOENT", 63: "EPERM", 69: "EROFS", 75: "EXDEV", 76: "ENOTCAPABLE"}
# Linux errno values a confined child gets for the same.
CHILD_REFUSALS = {
    errno.EACCES: "EACCES",
    errno.ENOENT: "ENOENT",
    errno.EPERM: "EPERM",
    errno.EROFS: "EROFS",
    errno.EXDEV: "EXDEV",
}


@dataclass(frozen=True)
class Answer:
    answer: str  # allow | deny | error
    detail: str  # the rule or errno that decided


# --- fs.* -----------------------------------------------------------------------------


def run_fs(tree: Tree) -> dict[str, Answer]:
    policy = build_policy(PERMISSIONS, runtime_fs_mode="read-write", agent_root=tree.agent)
    engine = PolicyEngine(policy)
    ctx = HostContext(policy=engine, agent_root=tree.agent)
    try:
        return {cell.id: _fs_cell(engine, ctx, cell) for cell in tree.cells}
    finally:
        engine.close()


def _fs_call(ctx: HostContext, cell: Cell) -> Any:
    call = {
        "read": lambda: OPS["fs.list_dir" if Path(cell.path).is_dir() else "fs.read_bytes"],
        "write": lambda: OPS["fs.append_text"],
        "create": lambda: OPS["fs.write_text"],
        "rename_from": lambda: OPS["fs.rename"],
        "rename_to": lambda: OPS["fs.rename"],
        "remove": lambda: OPS["fs.remove"],
    }.get(cell.op)
    if call is None:
        return None
    args = {"path": cell.path, "data": "x"}
    if cell.op.startswith("rename"):
        args = {"src": cell.path, "dst": cell.other}
    return call().handler(ctx, args)


def _fs_cell(engine: PolicyEngine, ctx: HostContext, cell: Cell) -> Answer:
    if cell.op in ("link", "connect"):
        return Answer("n/a", "no such fs.* op")
    before = engine.denials
    try:
        _fs_call(ctx, cell)
    except PermissionDenied as exc:
        entries = list(engine.audit.entries)
        if engine.denials > before and entries and entries[-1]["decision"] == "deny":
            return Answer(DENY, entries[-1]["rule"])
        if entries and entries[-1]["decision"] == "allow" and exc.message.startswith("filesystem: "):
            # The policy allowed the path and the capability refused the act (a hard link,
            # a swapped symlink): the dispatcher records it as filesystem.host-refusal.
            return Answer(DENY, f"filesystem.host-refusal: {exc.message}")
        return Answer("error", f"PermissionDenied without an audit entry: {exc.message}")
    except HostCallError as exc:
        return Answer("error", f"{type(exc).__name__}: {exc.message}")
    return Answer(ALLOW, "done")


# --- WASI -------------------------------------------------------------------------------


def guest_name(tree: Tree, host: str) -> str:
    """The name a guest gives a host path: under its preopen inside the agent root, else
    the host path itself (which no preopen covers)."""
    path = Path(host)
    if path.is_relative_to(tree.agent):
        return "/" + path.relative_to(tree.agent).as_posix()
    return host


def run_wasi(tree: Tree, wasm: Path) -> dict[str, Answer]:
    (tree.agent / "agent.wasm").write_bytes(wasm.read_bytes())
    manifest = {"name": "parity-wasi", "entry_point": "agent.wasm", "permissions": PERMISSIONS}
    (tree.agent / "agent.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    args = [
        f"{cell.id}|{cell.op}|{guest_name(tree, cell.path)}|{guest_name(tree, cell.other) if cell.other else ''}"
        for cell in tree.cells
        if cell.op != "connect"
    ]
    out = run_captured(tree.agent, *args)
    got = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
    answers: dict[str, Answer] = {}
    for cell in tree.cells:
        if cell.op == "connect":
            answers[cell.id] = Answer("n/a", "no connect in WASI preview 1")
            continue
        code = got.get(cell.id)
        answers[cell.id] = _errno_answer(None if code is None else int(code), WASI_REFUSALS)
    return answers


def _errno_answer(code: int | None, refusals: dict[int, str]) -> Answer:
    if code is None:
        return Answer("error", "the probe never reported this cell")
    if code == 0:
        return Answer(ALLOW, "done")
    if code in refusals:
        return Answer(DENY, refusals[code])
    return Answer("error", f"errno {code}")


# --- a confined child ------------------------------------------------------------------

# Standard modules only python3-minimal has too (os, socket, sys): no json in the child.
CHILD_PROBE = r"""
import os, socket, sys
for spec in sys.argv[1:]:
    cid, op, path, other = spec.split("|", 3)
    try:
        if op == "read":
            if os.path.isdir(path):
                os.listdir(path)
            else:
                fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
                try:
                    os.read(fd, 1)
                finally:
                    os.close(fd)
        elif op in ("write", "create"):
            flags = os.O_WRONLY | os.O_NONBLOCK | (os.O_CREAT | os.O_EXCL if op == "create" else 0)
            fd = os.open(path, flags, 0o600)
            try:
                os.write(fd, b"x")
            finally:
                os.close(fd)
        elif op in ("rename_from", "rename_to"):
            os.rename(path, other)
        elif op == "remove":
            os.unlink(path)
        elif op == "link":
            os.link(path, other, follow_symlinks=False)
        elif op == "connect":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(path)
            finally:
                s.close()
        code = 0
    except OSError as exc:
        code = exc.errno
    print(cid, code, flush=True)
"""


def run_child(tree: Tree) -> dict[str, Answer]:
    """The cells run by one Python probe, a confined child of a JS agent (the confinement
    mode is whatever HUGIND_BWRAP selects)."""
    cells = [f"{c.id}|{c.op}|{c.path}|{c.other}" for c in tree.cells]
    body = f"return await spawn('python3', ['-c', {js(CHILD_PROBE)}, ...{js(cells)}], {{detailed: true}});"
    permissions = {
        **PERMISSIONS,
        "shell": {"allow": True, "whitelist": ["python3"], "working_dir": "rw", "timeout": 60},
    }
    outcome = run_attack(tree.agent, body, permissions)
    value = outcome.value
    assert isinstance(value, dict) and value.get("ok"), value
    result = value["value"]
    assert result["exit_code"] == 0, result
    got = dict(line.split(" ", 1) for line in result["stdout"].splitlines() if " " in line)
    return {c.id: _errno_answer(int(got[c.id]) if c.id in got else None, CHILD_REFUSALS) for c in tree.cells}
