"""The scripts built into the engine (the prelude, standalone.js) end in a NUL, as QuickJS wants.

QuickJS's tokenizer takes ``src[len]`` for the end of its input. The embedded
arrays had no NUL after them, so the parser read on into whatever the linker
put next: a prelude whose length happened to put ``I+?`` there failed at
start-up with "SyntaxError: unexpected token in expression: '?'". Checked in
the header the build writes and in the engines this checkout runs.
"""

from __future__ import annotations

import importlib.util
import re

import pytest

from hugind.sandbox.js_engine import ENGINE_FILE
from tests.conftest import REPO

RUNTIME = REPO / "runtimes" / "js"


def _builder():
    spec = importlib.util.spec_from_file_location("build_engine", RUNTIME / "build_engine.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_header_holds_the_script_then_a_nul_not_counted_in_its_length(tmp_path):
    builder = _builder()
    script = b"export default () => 1 ? 2 : 3;\n"
    header = tmp_path / "prelude.h"
    builder.write_prelude_header(script, header, "t.js", "t")
    text = header.read_text()
    array = re.search(r"t_src\[\] = \{(.*?)\};", text, re.S)
    assert array is not None, text
    values = bytes(int(v) for v in array.group(1).replace("\n", " ").split(",") if v.strip())
    assert values == script + b"\0"
    assert f"t_len = {len(script)};" in text


def test_a_script_with_a_nul_is_refused(tmp_path):
    builder = _builder()
    with pytest.raises(builder.BuildError, match="NUL"):
        builder.write_prelude_header(b"a\0b", tmp_path / "x.h", "x.js", "x")


@pytest.mark.parametrize("variant", ["hugind-js.wasm", "hugind-js-standalone.wasm"])
def test_the_built_engine_has_a_nul_after_each_embedded_script(variant):
    builder = _builder()
    engine = (ENGINE_FILE.parent / variant).read_bytes()
    scripts = {"prelude": builder.assemble_prelude(), "standalone.js": (RUNTIME / "standalone.js").read_bytes()}
    if variant == "hugind-js.wasm":
        del scripts["standalone.js"]  # only the standalone variant embeds it
    for name, script in scripts.items():
        at = engine.find(script)
        assert at >= 0, f"{variant} does not embed this checkout's {name}: rebuild it"
        assert engine[at + len(script)] == 0, f"{variant}: no NUL after the embedded {name}"
