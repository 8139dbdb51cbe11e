"""The Python code the interpreter runs once, to be snapshotted, and the runner it leaves.

``snapshot_source`` is what ``python -S -c`` runs while the snapshot is made
(hugind/sandbox/py_snapshot.py says why and how). It runs in its own namespace,
so ``__main__`` stays as the interpreter made it: it imports the preloaded
modules, makes the buffer the host writes each run's input into, defines
``run``, moves every object it made to the collector's permanent generation
(``gc.freeze``: a run's collections then never walk or write the image's
objects), reports the addresses the host needs on stdout, and stops the whole
instance with ``os._exit``: the host keeps memory as it is at that point.

``run`` is what every run calls (through the function type's ``tp_call``):
it does, in Python, what ``python -c`` does after initialization and what
each run must own: ``sys.argv``/``sys.orig_argv``, ``os.environ``, a fresh
``__main__``, import caches, the ``random`` seed, line buffering on a
terminal; then compiles and runs the code as ``<string>`` in ``__main__``,
handles ``SystemExit`` and uncaught exceptions the way ``Py_RunMain`` does, and
takes finalization's first steps (``atexit``, flush, the special ``sys`` names,
``__main__`` cleared, garbage collected, flush). A normal end returns to the
host; any exit status leaves through ``os._exit``, as ``Py_Exit`` would.
"""

from __future__ import annotations

EXIT_MARK = 0x5A  # the exit status that says the set-up reached its end

_SOURCE = r"""
import sys, os, gc, marshal
_main = sys.modules["__main__"]
_pristine = dict(_main.__dict__)
sys.path[:0] = PATH
for _name in PRELOAD:
    __import__(_name)
_buf = bytearray(CAPACITY)
_meta = bytearray(META_SIZE)
_held = []


def run():
    import atexit, builtins
    size = int.from_bytes(_buf[:4], "little")
    argv, env = marshal.loads(bytes(_buf[4 : 4 + size]))
    command_at = argv.index("-c")
    source = argv[command_at + 1]
    sys.argv = ["-c", *argv[command_at + 2 :]]
    sys.orig_argv = list(argv)
    environ = os.environ
    for key in list(environ):
        del environ[key]
    for key, value in env:
        environ[os.fsdecode(key)] = os.fsdecode(value)
    namespace = _main.__dict__
    namespace.clear()
    namespace.update(_pristine)
    namespace["__annotations__"] = {}
    # What importlib.invalidate_caches() does for directories, which a run's
    # preopens may have changed. Not all of it: it would import
    # importlib.metadata (~0.5 s) and re-read the stdlib zip's directory
    # (~0.2 s), which is read-only and embedded.
    cache = sys.path_importer_cache
    file_finder = sys.modules["importlib._bootstrap_external"].FileFinder
    for path, finder in list(cache.items()):
        if finder is None or not os.path.isabs(path):
            del cache[path]
        elif type(finder) is file_finder:
            finder.invalidate_caches()
    sys.modules["importlib._bootstrap_external"]._NamespacePath._epoch += 1
    if "importlib.metadata" in sys.modules:
        sys.modules["importlib.metadata"].MetadataPathFinder.invalidate_caches()
    if "random" in sys.modules:
        sys.modules["random"].seed()
    # As the interpreter's start decides it: a terminal gets a line-buffered stdout.
    if sys.stdout is not None and os.isatty(sys.stdout.fileno()):
        sys.stdout.reconfigure(line_buffering=True)
    status = None
    try:
        exec(compile(source, "<string>", "exec", dont_inherit=True), namespace)
    except SystemExit as exc:
        status = _exit_status(exc)
    except BaseException as exc:
        # As if raised at the top, as under ``python -c``: not through run().
        exc = exc.with_traceback(exc.__traceback__.tb_next)
        sys.last_exc, sys.last_type, sys.last_value = exc, type(exc), exc
        sys.last_traceback = exc.__traceback__
        try:
            sys.excepthook(type(exc), exc, exc.__traceback__)
        except BaseException:
            pass
        status = 1
        del exc
    try:
        atexit._run_exitfuncs()
    except BaseException:
        pass
    status = _flush(status)
    # Finalization's first steps, as Py_FinalizeEx takes them: the special sys
    # names set to None (the import system among them, so a __del__ that imports
    # fails as it would), the standard streams put back, warnings unloaded (so a
    # warning raised now is printed by the C code, as then); then __main__'s
    # names released (their __del__ may print) and garbage collected. The old
    # values are held, not freed: freeing the import caches would write to
    # hundreds of the image's pages. sys.modules is kept and other modules'
    # dicts are not cleared. Run from code compiled as "sys", line 1, so that a
    # warning raised meanwhile is located "sys:1", as finalization's are.
    # Held in a global: not even run()'s return frees them (the instance ends with the run).
    _held.extend(getattr(sys, name, None) for name in _SYS_DELETES if not name.startswith("last_"))
    builtins._ = None
    for name in _SYS_DELETES:
        setattr(sys, name, None)
    for name in ("stdin", "stdout", "stderr"):
        setattr(sys, name, getattr(sys, f"__{name}__", None))
    _held.append(sys.modules.pop("warnings", None))
    # Code that put another module in as __main__ (hugind's runner runs the agent's
    # entry as one) gets it cleared first, as finalization clears sys.modules' __main__.
    mains = [namespace]
    current = sys.modules.get("__main__")
    if current is not _main and isinstance(getattr(current, "__dict__", None), dict):
        mains.insert(0, current.__dict__)
    del current
    release = "[main.clear() for main in mains]; gc.collect()"  # one line: warnings say "sys:1"
    try:
        exec(compile(release, "sys", "exec"), {"mains": mains, "gc": gc})
    except BaseException:
        pass
    status = _flush(status)
    if status is not None:
        os._exit(status)


_SYS_DELETES = (
    "path", "argv", "ps1", "ps2", "last_exc", "last_type", "last_value", "last_traceback",
    "path_hooks", "path_importer_cache", "meta_path", "__interactivehook__",
)


def _flush(status):
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except BaseException:
            status = 120  # as Py_FinalizeEx's caller says it, whatever the status was
    return status


def _exit_status(exc):
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    try:
        sys.stderr.write(str(code) + "\n")
    except BaseException:
        pass
    return 1


# Everything the set-up made goes to the permanent generation: a run's collections
# look only at what the run made (and do not write to every page of the image).
gc.collect()
gc.freeze()
os.write(1, repr({
    "run": id(run),
    "function_type": id(type(run)),
    "function_basicsize": type(run).__basicsize__,
    "args": id(()),
    "buf": id(_buf),
    "meta": id(_meta),
    "bytearray_basicsize": type(_buf).__basicsize__,
    "modules": sorted(sys.modules),
}).encode())
os._exit(EXIT_MARK)
"""


def snapshot_source(preload: tuple[str, ...], capacity: int, meta_size: int, path: tuple[str, ...] = ()) -> str:
    """The ``-c`` command for the set-up: ``_SOURCE`` run in a namespace of its own
    (``path`` goes first on ``sys.path``, before ``preload`` is imported, and stays there)."""
    body = (
        _SOURCE.replace("PRELOAD", repr(tuple(preload)))
        .replace("sys.path[:0] = PATH", f"sys.path[:0] = {list(path)!r}")
        .replace("CAPACITY", str(capacity))
        .replace("META_SIZE", str(meta_size))
        .replace("EXIT_MARK", str(EXIT_MARK))
    )
    namespace = "{'__builtins__': __builtins__, '__name__': '__hugind_snapshot__'}"
    return f"exec(compile({body!r}, '<hugind-snapshot>', 'exec'), {namespace})"
