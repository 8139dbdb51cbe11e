"""The learned preset as commented YAML, and writing it without leaving half a file.

The text is a valid ``--policy`` preset; its comments say how it was
derived and how to paste its ``permissions:`` into ``agent.yaml``.
Scalars are written as JSON (a subset of YAML), so no name or path can
change the structure.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from hugind.errors import UsageError
from hugind.learn.derive import (
    MEMORY_FACTOR,
    MEMORY_FLOOR_MB,
    MEMORY_STEP_MB,
    TIMEOUT_FACTOR,
    TIMEOUT_FLOOR_S,
    Learned,
)

HEADER = """\
# Learned by `hugind run --learn`: the tightest policy that allowed what one run used.
# Use it as a preset (it can only tighten agent.yaml):
#   hugind run AGENT --policy {file} --strict
# or paste `runtime_fs_mode:` and `permissions:` into agent.yaml.
# Files: the deepest directory covering the paths used inside each granted root;
#   write access only where a write happened.
# Limits: timeout = max(ceil({tf} x elapsed), {tfl} s); memory_mb = {mf} x peak guest memory,
#   rounded up to {ms} MiB, at least {mfl}; never above the starting policy.
"""


def _scalar(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return json.dumps(value, ensure_ascii=True)


def _value(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    return _scalar(value)


def _block(mapping: dict[str, Any], indent: int) -> list[str]:
    pad = "  " * indent
    lines = []
    for key, value in mapping.items():
        if isinstance(value, dict):
            lines.append(f"{pad}{key}:")
            lines.extend(_block(value, indent + 1))
        else:
            lines.append(f"{pad}{key}: {_value(value)}")
    return lines


def render(learned: Learned, file_name: str, usage_lines: list[str]) -> str:
    head = HEADER.format(
        file=file_name,
        tf=TIMEOUT_FACTOR,
        tfl=TIMEOUT_FLOOR_S,
        mf=MEMORY_FACTOR,
        ms=MEMORY_STEP_MB,
        mfl=MEMORY_FLOOR_MB,
    )
    notes = [f"# note: {line}" for line in learned.notes]
    used = [f"#   {line}" for line in usage_lines]
    body = _block(learned.preset, 0)
    return head + "\n".join([*notes, "# The run used:", *used, *body]) + "\n"


def check_writable(path: Path) -> None:
    """Before the run: refuse (exit 2) an output that surely cannot be written."""
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise UsageError(f"cannot write the learned policy to {path}: it is a directory")
    if not parent.is_dir():
        raise UsageError(f"cannot write the learned policy to {path}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write the learned policy to {path}: {parent} is not writable")


def write_policy(path: Path, text: str) -> None:
    """Temp file in the same directory, then rename: readers see the old file or the whole new one."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    except OSError as exc:
        raise UsageError(f"cannot write the learned policy to {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise UsageError(f"cannot write the learned policy to {path}: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
