"""ES module resolution and loading for JS agents.

The engine asks the host for every import, so these rules hold in one place
whatever the guest does:

* only relative specifiers (``./`` or ``../``) are accepted;
* the resolved file must lie inside the agent root, also after symlinks;
* only ``.js`` files are modules.

Module names are POSIX paths relative to the agent root (``lib/util.js``);
they are what stack traces show, so host paths never reach the agent.
A prebuilt artifact supplies bytecode for the names it carries instead of
sources (see ``hugind build``).
"""

from __future__ import annotations

import base64
import os
import posixpath
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hugind.errors import ModuleLoadError
from hugind.host.registry import HostContext, Op, arg

PRELUDE_NAME = "hugind:prelude"
MAX_MODULE_BYTES = 8 * 1024 * 1024


@dataclass
class ModuleSource:
    """Where a run's modules come from: files under ``root`` or prebuilt bytecode."""

    root: Path
    bytecode: dict[str, bytes] = field(default_factory=dict)
    sealed: bool = False  # an artifact: only its own modules exist, never files on disk

    def __post_init__(self) -> None:
        # os.path on strings: the same resolution as Path.resolve, at half the cost per run.
        self._root = os.path.realpath(self.root)
        self.root = Path(self._root)

    def resolve(self, base: str, specifier: str) -> str:
        return self._locate(base, specifier)[0]

    def _locate(self, base: str, specifier: str) -> tuple[str, str | None, int]:
        """(module name, real file, its size) for an import; the file is None for bytecode."""
        if not (specifier.startswith("./") or specifier.startswith("../")):
            raise ModuleLoadError(
                f"import '{specifier}' refused: only relative imports ('./' or '../') inside the agent are allowed"
            )
        if "\0" in specifier or "\\" in specifier:
            raise ModuleLoadError(f"import '{specifier}' refused: invalid characters in the specifier")
        base_dir = "" if base == PRELUDE_NAME else posixpath.dirname(base)
        name = posixpath.normpath(posixpath.join(base_dir, specifier))
        if name == ".." or name.startswith("../") or name.startswith("/"):
            raise ModuleLoadError(f"import '{specifier}' from '{base}' refused: it resolves outside the agent root")
        if not name.endswith(".js"):
            raise ModuleLoadError(f"import '{specifier}' refused: only .js modules can be imported")
        if name in self.bytecode:
            return name, None, 0
        if self.sealed:
            raise ModuleLoadError(f"import '{specifier}' from '{base}': module '{name}' is not in the artifact")
        try:
            real = os.path.realpath(os.path.join(self._root, name), strict=True)
            st = os.stat(real)
        except (FileNotFoundError, NotADirectoryError):
            raise ModuleLoadError(f"import '{specifier}' from '{base}': module '{name}' not found") from None
        except OSError as exc:
            raise ModuleLoadError(f"import '{specifier}': cannot resolve '{name}' ({exc.__class__.__name__})") from None
        if not real.startswith(self._root.rstrip("/") + "/"):
            raise ModuleLoadError(f"import '{specifier}' refused: '{name}' is a link that leads outside the agent root")
        if not stat.S_ISREG(st.st_mode):
            raise ModuleLoadError(f"import '{specifier}': '{name}' is not a file")
        return name, real, st.st_size

    def load(self, name: str) -> dict[str, Any]:
        # Re-check: a guest could ask for a name it never resolved.
        # The size is the one stat _locate made: a second would see the same file.
        resolved, path, size = self._locate(PRELUDE_NAME, "./" + name)
        if path is None:
            return {"bytecode": base64.b64encode(self.bytecode[resolved]).decode("ascii")}
        if size > MAX_MODULE_BYTES:
            raise ModuleLoadError(f"module '{name}' is {size} bytes, over the {MAX_MODULE_BYTES} byte limit")
        with open(path, "rb") as f:
            data = f.read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ModuleLoadError(f"module '{name}' is not valid UTF-8") from None
        # The text Path.read_text gave (universal newlines), without a text stream per load.
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        return {"source": text}


def _source(ctx: HostContext) -> ModuleSource:
    return ctx.services["modules"]


def _resolve(ctx: HostContext, args: dict[str, Any]) -> str:
    return _source(ctx).resolve(arg(args, "base", str), arg(args, "specifier", str))


def _load(ctx: HostContext, args: dict[str, Any]) -> dict[str, Any]:
    return _source(ctx).load(arg(args, "name", str))


OPS: tuple[Op, ...] = (
    Op("module.resolve", _resolve),
    Op("module.load", _load),
)
