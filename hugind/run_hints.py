"""The hints ``hugind run`` prints after its error line, fitted to the agent as it was run.

The run (hugind.run, hugind.sessions.plan) writes them knowing the agent, not
the command line: the resume hint names the agent ``AGENT``, and the denial
hint says "edit agent.yaml" even for a bare ``.js`` / ``.wasm`` file, which
has none. Here the CLI puts in the path the user typed, and tells the user of
a bare file how to give it an agent.yaml.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# hugind.denial_hints' first line ends so; what follows names agent.yaml keys.
_EDIT = "; to allow, edit agent.yaml:"


def resume(lines: list[str] | None, agent: Path) -> list[str] | None:
    """The resume hint with the path that was run in place of ``AGENT``."""
    if not lines:
        return lines
    import shlex

    return [line.replace("hugind run AGENT ", f"hugind run {shlex.quote(str(agent))} ") for line in lines]


def _bare(loaded: Any) -> bool:
    """A .js / .wasm file run without an agent.yaml (an artifact carries its own)."""
    from hugind.manifest import MANIFEST_TEXT

    extra = getattr(loaded, "extra", None)
    return extra is not None and MANIFEST_TEXT not in extra and "artifact" not in extra


def denials(lines: list[str] | None, loaded: Any) -> list[str] | None:
    """The denial hint; for a bare file, how to make the agent.yaml it tells to edit."""
    if not lines or loaded is None or not _bare(loaded) or not lines[0].endswith(_EDIT):
        return lines
    import shlex

    file = loaded.entry.name
    head = lines[0][: -len(_EDIT)]
    return [
        f"{head}; {file} runs without an agent.yaml, so every capability is denied.",
        "hugind: to allow, run it from a folder with an agent.yaml: `hugind init DIR` writes one, or put",
        f"hugind: one beside {file} with the two lines `name: {loaded.manifest.name}` and `entry_point: {file}`",
        f"hugind: and run the folder ({shlex.quote(str(loaded.root))}); then add to agent.yaml:",
        *lines[1:],
    ]
