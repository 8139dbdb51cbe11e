"""Wizer-style pre-initialization: run a module's set-up once, keep the result.

``snapshot(wasm, prepare)`` instantiates ``wasm``, lets ``prepare`` call its
exports, then writes a new module whose data segments hold the linear memory
as ``prepare`` left it and whose mutable globals start at the values they had.
The constructors already ran, so ``_initialize`` (and any start function) is
dropped from the result. Everything else is copied byte for byte.

Internal globals are not exported, so the module that actually runs is an
instrumented copy that also exports every global, table and the memory under
reserved names; the snapshot is written from the original's sections.

The set-up runs with an empty WASI context (no argv, env, preopens or stdio)
and every non-WASI import trapping, so nothing of the host can leak into the
image; a module whose set-up needs more is refused, as is any module whose
state a memory + globals image would not reproduce faithfully.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import wasmtime

from hugind.wasm.code_scan import state_writer
from hugind.wasm.leb128 import WasmFormatError, unsigned

if TYPE_CHECKING:
    from hugind.wasm import binary as wb

# The binary reader/writer (and its dataclasses) is imported by the functions that
# take a module apart: a run whose snapshot is cached never does, and should not pay for it.

RESERVED_PREFIX = "__hugind_snapshot_"
ZERO_GAP = 256  # zero runs shorter than this stay inside a segment (fewer, larger segments)
DEFAULT_FUEL = 20_000_000_000

Prepare = Callable[[wasmtime.Store, wasmtime.Instance], None]


class SnapshotError(Exception):
    """The module cannot be snapshotted faithfully, or its set-up failed; the message says why."""


def snapshot(
    wasm: bytes,
    prepare: Prepare,
    *,
    engine: wasmtime.Engine | None = None,
    fuel: int = DEFAULT_FUEL,
    export_state: bool = False,
) -> bytes:
    """Return ``wasm`` pre-initialized by ``prepare`` (see the module docstring).

    ``engine``: where to run the set-up; by default a fresh fuel-metered one
    (``fuel`` units), so a set-up that never ends is stopped.
    ``export_state``: the result also exports its mutable globals and tables
    under reserved names (``is_state_export``), so a host can put an
    instance back to its starting state (hugind/sandbox/recycle.py); only
    when the module's code cannot change a table or a segment, which no
    reset of memory and globals would undo (hugind/wasm/code_scan.py).
    Otherwise the result is the one without ``export_state``.
    """
    from hugind.wasm import binary as wb

    try:
        module = wb.parse(wasm)
        plan = _Plan(module)
    except WasmFormatError as exc:
        raise SnapshotError(f"cannot snapshot this module: {exc}") from None
    if export_state:
        export_state = state_writer(module.payload(wb.CODE)) is None
    if engine is None:
        config = wasmtime.Config()
        config.consume_fuel = True
        config.cranelift_opt_level = "none"  # compiled once, run once: compile fast
        engine = wasmtime.Engine(config)
    store = wasmtime.Store(engine)
    if engine_uses_fuel(store):
        store.set_fuel(fuel)
    store.set_wasi(wasmtime.WasiConfig())
    try:
        compiled = wasmtime.Module(engine, plan.instrumented())
        linker = wasmtime.Linker(engine)
        linker.define_wasi()
        linker.define_unknown_imports_as_traps(compiled)
        instance = linker.instantiate(store, compiled)
    except (wasmtime.WasmtimeError, wasmtime.Trap) as exc:
        raise SnapshotError(f"cannot instantiate the module to snapshot it: {_first_line(exc)}") from None
    exports = instance.exports(store)
    before = _tables(store, exports, plan.table_count)
    try:
        prepare(store, instance)
    except (wasmtime.WasmtimeError, wasmtime.Trap) as exc:
        raise SnapshotError(f"the set-up to snapshot failed: {_first_line(exc)}") from None
    if _tables(store, exports, plan.table_count) != before:
        raise SnapshotError("the set-up changed a table; a memory + globals snapshot would not reproduce it")
    memory = exports[RESERVED_PREFIX + "memory"]
    assert isinstance(memory, wasmtime.Memory)
    image = bytes(memory.read(store, 0, memory.data_len(store)))
    values = {}
    for index in plan.mutable_globals:
        glob = exports[f"{RESERVED_PREFIX}global_{index}"]
        assert isinstance(glob, wasmtime.Global)
        values[index] = glob.value(store)
    return plan.write(image, memory.size(store), values, export_state)


def engine_uses_fuel(store: wasmtime.Store) -> bool:
    try:
        store.get_fuel()
    except wasmtime.WasmtimeError:
        return False
    return True


class _Plan:
    """What the original module holds, checked for what a snapshot can represent."""

    def __init__(self, module: wb.Module) -> None:
        from hugind.wasm import binary as wb

        self.module = module
        for imp in wb.imports(module):
            if imp.kind != wb.KIND_FUNC:
                kind = {wb.KIND_TABLE: "table", wb.KIND_MEMORY: "memory", wb.KIND_GLOBAL: "global"}.get(imp.kind, "tag")
                raise SnapshotError(
                    f"the module imports {kind} '{imp.module}.{imp.name}'; only function imports can be snapshotted"
                )
        memories = wb.memories(module)
        if len(memories) != 1:
            raise SnapshotError(f"the module defines {len(memories)} memories; a snapshot needs exactly one")
        self.memory = memories[0]
        if self.memory.is64 or self.memory.shared:
            raise SnapshotError("64-bit or shared memories cannot be snapshotted")
        self.globals = wb.globals_(module)
        for i, glob in enumerate(self.globals):
            if glob.mutable and glob.valtype not in {wb.I32, wb.I64, wb.F32, wb.F64}:
                raise SnapshotError(f"mutable global {i} is not a number type; it cannot be snapshotted")
        self.mutable_globals = [i for i, g in enumerate(self.globals) if g.mutable]
        for seg in wb.data_segments(module):
            if seg.offset is None:
                raise SnapshotError(
                    "the module has passive data segments (memory.init at run time); they cannot be snapshotted"
                )
        self.table_count = wb.tables(module)
        self.exports = wb.exports(module)
        taken = [e.name for e in self.exports if e.name.startswith(RESERVED_PREFIX)]
        if taken:
            raise SnapshotError(f"the module already exports '{taken[0]}', a name reserved for snapshotting")

    def state_exports(self) -> list[wb.Export]:
        from hugind.wasm import binary as wb

        out = [wb.Export(f"{RESERVED_PREFIX}global_{i}", wb.KIND_GLOBAL, i) for i in self.mutable_globals]
        return out + [wb.Export(f"{RESERVED_PREFIX}table_{i}", wb.KIND_TABLE, i) for i in range(self.table_count)]

    def instrumented(self) -> bytes:
        from hugind.wasm import binary as wb

        extra = [wb.Export(RESERVED_PREFIX + "memory", wb.KIND_MEMORY, 0), *self.state_exports()]
        copy = wb.Module([wb.Section(s.id, s.payload) for s in self.module.sections])
        copy.put(wb.EXPORT, wb.encode_exports(self.exports + extra))
        return copy.to_bytes()

    def write(self, image: bytes, pages: int, values: dict[int, int | float], export_state: bool = False) -> bytes:
        from hugind.wasm import binary as wb

        out = wb.Module([wb.Section(s.id, s.payload) for s in self.module.sections])
        globals_ = [
            wb.Global(g.valtype, g.mutable, wb.const_expr(g.valtype, values[i]) if g.mutable else g.init)
            for i, g in enumerate(self.globals)
        ]
        if globals_:
            out.put(wb.GLOBAL, wb.encode_globals(globals_))
        out.put(wb.MEMORY, wb.encode_memories([wb.Limits(pages, self.memory.max)]))
        # Constructors (and any start function) already ran; running them again
        # would re-initialize over the image.
        kept = [e for e in self.exports if e.name != "_initialize"]
        out.put(wb.EXPORT, wb.encode_exports(kept + (self.state_exports() if export_state else [])))
        out.put(wb.START, None)
        segments = [wb.DataSegment(data, wb.i32_offset(offset)) for offset, data in nonzero_runs(image)]
        out.put(wb.DATA, wb.encode_data(segments) if segments else None)
        if out.find(wb.DATACOUNT) is not None:
            out.put(wb.DATACOUNT, unsigned(len(segments)))
        return out.to_bytes()


def is_state_export(name: str) -> bool:
    """Whether ``name`` is one of the reserved exports of a global or table (``export_state``)."""
    return name.startswith((RESERVED_PREFIX + "global_", RESERVED_PREFIX + "table_"))


def nonzero_runs(image: bytes, gap: int = ZERO_GAP) -> list[tuple[int, bytes]]:
    """(offset, bytes) runs covering every non-zero byte; zero gaps under ``gap`` bytes are kept inside a run."""
    runs = []
    pos = 0
    for zeros in re.finditer(b"\0{%d,}" % gap, image):
        if zeros.start() > pos:
            runs.append((pos, zeros.start()))
        pos = zeros.end()
    if pos < len(image):
        runs.append((pos, len(image)))
    out = []
    for start, end in runs:
        chunk = image[start:end]
        lead = len(chunk) - len(chunk.lstrip(b"\0"))
        chunk = chunk.strip(b"\0")
        if chunk:
            out.append((start + lead, chunk))
    return out


def _tables(store: wasmtime.Store, exports: wasmtime.InstanceExports, count: int) -> list[list[bytes | None]]:
    """An identity for every table element (compared before and after the set-up)."""
    out = []
    for i in range(count):
        table = exports[f"{RESERVED_PREFIX}table_{i}"]
        assert isinstance(table, wasmtime.Table)
        out.append([_identity(table.get(store, j)) for j in range(table.size(store))])
    return out


def _identity(item: object) -> bytes | None:
    if isinstance(item, wasmtime.Val):  # how wasmtime-py hands back a null reference
        item = item.value
    if item is None:
        return None
    raw = getattr(item, "_func", None)
    if raw is None:
        raise SnapshotError(f"cannot compare table element {item!r} before and after the set-up")
    return bytes(raw)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else exc.__class__.__name__
