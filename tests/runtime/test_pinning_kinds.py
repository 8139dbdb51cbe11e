"""``hugind.pinning`` in-process, the cases its mutation run found untested (issue #32):
a Python agent sealed to the sources its digest covers, the agent.yaml text in
every kind's digest, and the ``--expect`` refusal of agents that have no build
digest to name (test_pinning.py covers JS folders and the rest)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import wasmtime

from hugind.digest import python_digest
from hugind.errors import DigestMismatch
from hugind.manifest import load_agent
from hugind.pinning import pin, verify
from hugind.sandbox.py_runtime import PINNED_SOURCE
from hugind.sandbox.py_sources import PINNED_SOURCES
from tests.conftest import run_cli, write_agent

DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
WRONG = "sha256:" + "0" * 64
WAT = '(module (memory (export "memory") 1) (func (export "_start")))'
MAIN_PY = 'from lib.words import hello\n\nprint(hello("Zoë"))\n'
WORDS_PY = 'def hello(name):\n    return "hello " + name\n'


def _python(root: Path, description: str = "one") -> Path:
    files = {
        "agent.yaml": f"name: py\ndescription: {description}\nentry_point: main.py\nmode: script\n",
        "main.py": MAIN_PY,
        "lib/words.py": WORDS_PY,
        "notes.txt": "not a python file\n",
    }
    return write_agent(root, files)


def test_a_python_agent_is_sealed_to_every_py_file_of_its_folder(tmp_path):
    root = _python(tmp_path / "a")
    agent = load_agent(root)
    assert agent.runtime == "python"
    pinned = pin(agent)
    sources = {"lib/words.py": WORDS_PY.encode(), "main.py": MAIN_PY.encode()}
    manifest = (root / "agent.yaml").read_text()
    assert pinned.digest == python_digest("main.py", manifest, sources)
    sealed = pinned.agent
    assert sealed is not agent and sealed.runtime == "python" and sealed.entry == agent.entry
    # The run reads the entry's text and every module from these, not from the folder.
    assert sealed.extra[PINNED_SOURCE] == MAIN_PY
    assert sealed.extra[PINNED_SOURCES] == sources
    assert sealed.extra["pinned_digest"] == pinned.digest
    assert PINNED_SOURCE not in agent.extra and "pinned_digest" not in agent.extra
    assert verify(agent, pinned.digest, "src").extra[PINNED_SOURCES] == sources
    # Swapped on disk after the check: the sealed agent still pins to what was hashed.
    (root / "lib" / "words.py").write_text(WORDS_PY.replace("hello ", "bye "))
    assert pin(sealed).digest == pinned.digest and pin(sealed).agent is sealed
    assert pin(load_agent(root)).digest != pinned.digest


@pytest.mark.parametrize("kind", ["js", "wasm", "python"])
def test_the_agent_yaml_text_is_part_of_every_kinds_digest(tmp_path, kind):
    def folder(name: str, description: str) -> Path:
        if kind == "python":
            return _python(tmp_path / name, description)
        entry = "main.wasm" if kind == "wasm" else "main.js"
        root = write_agent(
            tmp_path / name,
            {"agent.yaml": f"name: a\ndescription: {description}\nentry_point: {entry}\n"}
            | ({} if kind == "wasm" else {"main.js": "export default () => 1;\n"}),
        )
        if kind == "wasm":
            (root / entry).write_bytes(wasmtime.wat2wasm(WAT))
        return root

    one, same, other = (pin(load_agent(folder(n, d))).digest for n, d in (("a", "x"), ("b", "x"), ("c", "y")))
    assert DIGEST.fullmatch(one)
    assert one == same  # the folder's path is not in it
    assert one != other  # one word of agent.yaml is


def test_a_wasm_agent_that_does_not_match_names_only_its_own_digest(tmp_path):
    module = tmp_path / "solo.wasm"
    module.write_bytes(wasmtime.wat2wasm(WAT))
    agent = load_agent(module)
    digest = pin(agent).digest
    with pytest.raises(DigestMismatch) as err:
        verify(agent, WRONG, "solo.wasm")
    assert str(err.value) == (
        f"solo.wasm: digest {digest} does not match --expect {WRONG}; "
        "the agent is not the one that was pinned, so nothing was run"
    )


def test_a_built_artifact_that_does_not_match_names_only_its_own_digest(tmp_path):
    # Its digest is its build's: there is no second one to name or to accept.
    files = {"main.js": "export default () => 1;\n", "agent.yaml": "name: b\nentry_point: main.js\n"}
    src = write_agent(tmp_path / "src", files)
    out = tmp_path / "b.wasm"
    res = run_cli("build", str(src), "-o", str(out))
    assert res.code == 0, res.stderr
    agent = load_agent(out)
    digest = res.stdout.strip()
    assert verify(agent, digest, "b.wasm") is agent
    with pytest.raises(DigestMismatch) as err:
        verify(agent, WRONG, "b.wasm")
    assert str(err.value) == (
        f"b.wasm: digest {digest} does not match --expect {WRONG}; "
        "the agent is not the one that was pinned, so nothing was run"
    )
