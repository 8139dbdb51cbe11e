"""What a Python agent sees of its own folder: its .py files as hashed, nothing else
(hugind/sandbox/py_sources.py), whatever else lies beside agent.yaml."""

from __future__ import annotations

from hugind.manifest import load_agent
from hugind.pinning import pin
from hugind.run import RunOptions, run_agent
from tests.python.helpers import run_py, write_agent

LOOK = """\
import os


def main():
    seen = {}
    for name in ("/.env", "/data/notes.txt", "/agent.yaml", "/main.py"):
        try:
            with open(name, "rb") as f:
                seen[name] = f.read(40).decode()
        except OSError as e:
            seen[name] = type(e).__name__
    tree = sorted(os.path.join(d, f) for d, _, fs in os.walk("/") for f in fs)
    return {"seen": seen, "tree": tree}
"""


def test_open_reaches_only_the_agents_python_files(tmp_path):
    root = write_agent(tmp_path / "a", LOOK)
    (root / ".env").write_text("API_KEY=sk-user-secret\n")
    (root / "data").mkdir()
    (root / "data" / "notes.txt").write_text("private notes\n")
    (root / "lib").mkdir()
    (root / "lib" / "util.py").write_text("X = 1\n")
    value = run_py(root).value
    assert value["seen"]["/.env"] == "FileNotFoundError"
    assert value["seen"]["/data/notes.txt"] == "FileNotFoundError"
    assert value["seen"]["/agent.yaml"] == "FileNotFoundError"
    assert value["seen"]["/main.py"].startswith("import os")
    assert value["tree"] == ["/lib/util.py", "/main.py"]


def test_a_pinned_agent_imports_the_bytes_its_digest_covers(tmp_path):
    root = write_agent(tmp_path / "a", "import helper\n\ndef main():\n    return helper.WHO\n")
    (root / "helper.py").write_text("WHO = 'checked'\n")
    pinned = pin(load_agent(root))
    # Changed after the check (a racing writer, a second checkout step): not what runs.
    (root / "helper.py").write_text("WHO = 'swapped in after the check'\n")
    result = run_agent(pinned.agent, RunOptions(stdout=lambda _: None, stderr=lambda _: None))
    assert result.value == "checked"
    # Unpinned, a run reads the folder as it is now.
    assert run_py(root).value == "swapped in after the check"


def test_the_private_copy_is_removed_after_the_run(tmp_path, monkeypatch):
    from hugind.sandbox import py_sources

    made = []
    real = py_sources.materialize
    monkeypatch.setattr(py_sources, "materialize", lambda sources: made.append(real(sources)) or made[-1])
    root = write_agent(tmp_path / "a", "def main():\n    return 1\n")
    assert run_py(root).value == 1
    import gc

    gc.collect()
    assert len(made) == 1 and made[0].name.startswith(py_sources.PREFIX)
    assert not made[0].exists()
