"""``hugind init``: write a new agent folder from one of the templates in hugind/templates.

A template is a folder of files; ``__AGENT_NAME__`` in them becomes the new
agent's name (the folder's name, made valid). The ``wasm-c`` template also
gets the C SDK headers (shipped in the wheel under templates/_sdk, read from
runtimes/wasm in a source checkout) and is compiled once with zig, so the
folder runs at once; without zig nothing is written.

Nothing is overwritten silently: a non-empty folder is refused unless
``force``, and then every replaced file is named.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hugind.errors import UsageError

TEMPLATES = ("js", "agentic", "wasm-c", "python", "python-agentic")
TEMPLATE_ROOT = Path(__file__).resolve().parent / "templates"
PLACEHOLDER = "__AGENT_NAME__"
SDK_HEADERS = ("hugind.h", "hugind_json.h")
EXECUTABLE = ("test.sh",)
# The build command the wasm-c README documents, run in the new folder.
WASM_C_BUILD = ("-m", "ziglang", "cc", "-target", "wasm32-wasi", "-mexec-model=reactor", "-O2", "-s")
WASM_C_BUILD_TAIL = ("-I", "sdk", "main.c", "-o", "agent.wasm")


class BuildFailed(UsageError):
    """zig ran and refused main.c (exit 2, like any bad input)."""


@dataclass
class Scaffolded:
    root: Path
    template: str
    name: str
    written: list[str] = field(default_factory=list)  # relative paths
    replaced: list[str] = field(default_factory=list)  # of those, the ones that existed (--force)
    built: bool = False


def agent_name(target: Path) -> str:
    """The folder's name as a valid agent name (letters, digits, '.', '_', '-')."""
    raw = target.resolve().name
    name = re.sub(r"[^A-Za-z0-9_.-]", "-", raw).lstrip("._-")[:64]
    return name or "agent"


def sdk_dir() -> Path:
    """Where the C SDK headers are: shipped in the wheel, or the source checkout's."""
    shipped = TEMPLATE_ROOT / "_sdk"
    if all((shipped / h).is_file() for h in SDK_HEADERS):
        return shipped
    return TEMPLATE_ROOT.parent.parent / "runtimes" / "wasm"


def _template_files(template: str) -> dict[str, Path]:
    """Relative path in the new folder -> source file."""
    base = TEMPLATE_ROOT / template
    files = {
        path.relative_to(base).as_posix(): path
        for path in sorted(base.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }
    if template == "wasm-c":
        sdk = sdk_dir()
        for header in SDK_HEADERS:
            if not (sdk / header).is_file():
                raise UsageError(f"the C SDK header {header} is missing from this hugind installation ({sdk})")
            files[f"sdk/{header}"] = sdk / header
    return files


def _check_target(target: Path, force: bool) -> None:
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} exists and is not a folder")
    if target.is_dir() and not force and any(target.iterdir()):
        raise UsageError(f"{target} is not empty (pass --force to write the template's files into it anyway)")


def _compiler_ready() -> None:
    if importlib.util.find_spec("ziglang") is None:
        raise UsageError(
            "the wasm-c template compiles main.c with zig, which is not installed: "
            "install the ziglang Python package (pip install ziglang), then run hugind init again"
        )


def scaffold(
    target: Path, template: str = "js", *, force: bool = False, progress: Callable[[str], None] | None = None
) -> Scaffolded:
    """Write ``template`` into ``target``; raises UsageError (nothing written) or BuildFailed."""
    if template not in TEMPLATES:
        raise UsageError(f"unknown template '{template}' (choose one of: {', '.join(TEMPLATES)})")
    _check_target(target, force)
    if template == "wasm-c":
        _compiler_ready()
    files = _template_files(template)
    for rel in files:  # what would fail halfway, or write outside the folder: refuse first
        if (target / rel).is_dir() and not (target / rel).is_symlink():
            raise UsageError(f"{target / rel} is a folder; the template writes a file there")
        for parent in Path(rel).parents:
            if parent != Path(".") and (target / parent).is_symlink():
                raise UsageError(f"{target / parent} is a symlink; the template writes its files into a real folder")
    done = Scaffolded(target, template, agent_name(target))
    try:
        for rel, source in files.items():
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            if dest.exists() or dest.is_symlink():
                done.replaced.append(rel)
                dest.unlink()  # never write through a symlink that was there before
            data = source.read_bytes()
            if source.parent.name != "_sdk" and not rel.startswith("sdk/"):
                data = data.replace(PLACEHOLDER.encode(), done.name.encode())
            dest.write_bytes(data)
            if rel in EXECUTABLE:
                dest.chmod(0o755)
            done.written.append(rel)
    except OSError as exc:
        raise UsageError(f"cannot write into {target}: {exc.strerror or exc}") from None
    if template == "wasm-c":
        _build_wasm(target, progress)
        done.built = True
    return done


def _build_wasm(target: Path, progress: Callable[[str], None] | None) -> None:
    if progress is not None:
        progress("compiling main.c to agent.wasm with zig (the first build takes a few seconds)...")
    cmd = [sys.executable, *WASM_C_BUILD, *WASM_C_BUILD_TAIL]
    try:
        proc = subprocess.run(cmd, cwd=target, capture_output=True, text=True, timeout=600, env=dict(os.environ))
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildFailed(f"zig cc did not run: {exc}") from None
    if proc.returncode != 0:
        first = next((line for line in proc.stderr.splitlines() if line.strip()), f"exit {proc.returncode}")
        raise BuildFailed(f"compiling main.c failed (files are written; fix and rebuild as README.md says): {first}")


def next_steps(done: Scaffolded, shown: str) -> list[str]:
    """What to type next, for the person who ran hugind init."""
    quoted = shlex.quote(shown)
    run = f"hugind run {quoted}"
    if done.template in ("agentic", "python-agentic"):
        run += ' --backend http://127.0.0.1:8080/v1 --model NAME -- "What is on my to-do list?"'
    lines = [f"created {done.template} agent '{done.name}' in {shown}" + (" (agent.wasm built)" if done.built else "")]
    lines += [f"replaced {rel}" for rel in done.replaced]
    lines += [
        "next:",
        f"  {run}",
        f"  hugind check {quoted}      # the effective policy",
        f"  sh {shlex.quote(shown + '/test.sh')}        # smoke test",
        f"  edit {shlex.quote(shown + '/agent.yaml')}   # grant only what the agent needs",
    ]
    return lines
