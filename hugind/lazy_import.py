"""A module imported at its first use, for a module most runs never use.

Some host ops modules need a heavy standard module only when the agent calls
them (``subprocess``, with ``signal``, ``selectors`` and ``locale``, costs a
cold ``hugind run`` ~5 ms, and most agents start no command). ``LazyModule``
stands in for such a module at the top of the file, so nothing below it
changes: ``subprocess.Popen`` imports ``subprocess`` the first time it is read.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """The module ``name``, imported when one of its attributes is first read."""

    __slots__ = ("_module", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        # Only called for names the stand-in lacks (its own two are slots). Two threads
        # may both get here first: the import system hands both the same module.
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported on first use>"
