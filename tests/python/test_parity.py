"""The policy's truth table (tests/parity) asked of a Python agent's own file calls.

A Python agent reaches files through WASI like a raw ``.wasm`` agent, so every
cell must get the answer the matrix expects of the ``wasi`` layer: the same
tree, policy and errno reading (``_errno_answer``), with Python's ``os``
calls (wasi-libc's errno values are WASI's) in place of the C probe.
"""

from __future__ import annotations

import pytest
import yaml

from tests.parity.layers import PERMISSIONS, WASI_REFUSALS, Answer, _errno_answer, guest_name
from tests.parity.matrix import build_tree, expected
from tests.runtime.helpers import run_captured

PROBE = """\
import os, sys

for spec in sys.argv[1:]:
    cid, op, path, other = spec.split("|", 3)
    try:
        if op == "read":
            if os.path.isdir(path):
                os.listdir(path)
            else:
                fd = os.open(path, os.O_RDONLY)
                try:
                    os.read(fd, 1)
                finally:
                    os.close(fd)
        elif op in ("write", "create"):
            flags = os.O_WRONLY | (os.O_CREAT | os.O_EXCL if op == "create" else 0)
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
        code = 0
    except OSError as exc:
        code = exc.errno
    print(cid, code)
"""


@pytest.fixture
def tree(tmp_path, monkeypatch):
    built = build_tree(tmp_path / "tree")
    monkeypatch.setenv("HUGIND_HOME", str(built.home))
    yield built
    built.close()


def test_python_file_calls_give_every_cell_the_wasi_layers_answer(tree):
    (tree.agent / "main.py").write_text(PROBE)
    manifest = {"name": "parity-python", "entry_point": "main.py", "permissions": PERMISSIONS}
    (tree.agent / "agent.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    cells = [c for c in tree.cells if c.op != "connect"]
    args = [f"{c.id}|{c.op}|{guest_name(tree, c.path)}|{guest_name(tree, c.other) if c.other else ''}" for c in cells]
    out = run_captured(tree.agent, *args)
    got = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
    wrong, answers = [], []
    for cell in cells:
        want, why = expected("wasi", cell.cls, cell.op)
        code = got.get(cell.id)
        answer: Answer = _errno_answer(None if code is None else int(code), WASI_REFUSALS)
        answers.append(answer.answer)
        if answer.answer != want:
            wrong.append(f"{cell.id}: python says {answer.answer} ({answer.detail}), expected {want} ({why})")
    assert len(got) == len(cells)
    assert answers.count("allow") >= 5 and answers.count("deny") >= 20  # both kinds of cell were really asked
    assert wrong == [], "\n" + "\n".join(wrong)
