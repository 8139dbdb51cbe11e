"""Hatchling build hook: compile the JS engine while hugind is installed.

The engine (QuickJS-NG + runtimes/js/shim.c + prelude.js, compiled to
wasm32-wasi with zig) is written to hugind/_engine/, which both editable
and regular wheels ship. It is never committed; see runtimes/js/build_engine.py.

A regular wheel also gets the C SDK headers (runtimes/wasm/*.h) under
hugind/templates/_sdk, for ``hugind init --template wasm-c``, and the Python
guest library (runtimes/python) as hugind/_pyguest; an editable install
reads them from the checkout.

pip shows a build backend's output only with -v (``pip install -v .``), so
progress goes to the user's terminal directly when there is one
(runtimes/js/build_progress.py), else to stderr: the first line says how long
the wait is, then each compiled unit, and a line every 15 s while zig works.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class EngineBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name not in ("wheel", "editable"):
            return
        root = Path(self.root)
        builder = _load(root / "runtimes/js/build_engine.py", "hugind_build_engine")
        shown = _load(root / "runtimes/js/build_progress.py", "hugind_build_progress")
        if self.target_name == "wheel":
            sdk = root / "runtimes" / "wasm"
            for header in ("hugind.h", "hugind_json.h"):
                build_data["force_include"][str(sdk / header)] = f"hugind/templates/_sdk/{header}"
            # The guest library of .py agents (an editable install reads runtimes/python itself).
            build_data["force_include"][str(root / "runtimes" / "python")] = "hugind/_pyguest"
        progress = shown.Progress()
        progress.say(
            f"building the JS engine (QuickJS-NG to wasm32-wasi with zig): {shown.ESTIMATE}; "
            "cached by source hash after"
        )
        progress.heartbeat("building the JS engine")
        try:
            builder.build(root / "hugind" / "_engine", progress=progress.say)
        except builder.BuildError as exc:
            if progress.on_terminal:
                progress.say(f"cannot build the JS engine: {str(exc).splitlines()[0]}")
            sys.stderr.write(f"\nhugind: cannot build the JS engine: {exc}\n\n")  # pip shows it on failure
            raise SystemExit(1) from None
        finally:
            progress.close()


def _load(path: Path, name: str) -> Any:
    """A module of runtimes/js, which is not a package the build environment can import."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
