"""Hatchling build hook: compile the JS engine while hugind is installed.

The engine (QuickJS-NG + runtimes/js/shim.c + prelude.js, compiled to
wasm32-wasi with zig) is written to hugind/_engine/, which both editable
and regular wheels ship. It is never committed; see runtimes/js/build_engine.py.

A regular wheel also gets the C SDK headers (runtimes/wasm/*.h) under
hugind/templates/_sdk, for ``hugind init --template wasm-c``; an editable
install reads them from the checkout.

Progress goes to stderr. pip shows a build backend's output only with -v
(``pip install -v .``), so the first line says how long the wait is.
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
        if self.target_name == "wheel":
            sdk = root / "runtimes" / "wasm"
            for header in ("hugind.h", "hugind_json.h"):
                build_data["force_include"][str(sdk / header)] = f"hugind/templates/_sdk/{header}"
        sys.stderr.write(
            "hugind: building the JS engine (QuickJS-NG to wasm32-wasi with zig): "
            "about 40 s the first time, cached by source hash after\n"
        )
        sys.stderr.flush()
        try:
            builder.build(root / "hugind" / "_engine", verbose=True)
        except builder.BuildError as exc:
            sys.stderr.write(f"\nhugind: cannot build the JS engine: {exc}\n\n")
            raise SystemExit(1) from None
