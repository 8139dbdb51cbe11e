"""Hatchling build hook: compile the JS engine while hugind is installed.

The engine (QuickJS-NG + runtimes/js/shim.c + prelude.js, compiled to
wasm32-wasi with zig) is written to hugind/_engine/, which both editable
and regular wheels ship. It is never committed; see runtimes/js/build_engine.py.
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
        spec = importlib.util.spec_from_file_location("hugind_build_engine", root / "runtimes/js/build_engine.py")
        assert spec and spec.loader
        builder = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(builder)
        try:
            builder.build(root / "hugind" / "_engine", verbose=True)
        except builder.BuildError as exc:
            sys.stderr.write(f"\nhugind: cannot build the JS engine: {exc}\n\n")
            raise SystemExit(1) from None
