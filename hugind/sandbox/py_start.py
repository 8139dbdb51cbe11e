"""Which start a ``.py`` agent's run takes: the snapshot, or the interpreter's ``_start``.

The snapshot (py_snapshot.py) is made for agents: ``python -I -S -B -c`` (the
plain path's options), the guest library preopened first at ``/.hugind``
under its own name (so it is fd 3, the host-call channel, as in every run),
and the library itself imported (``hugind`` with its runner, channel, wire,
loop and tools, and through the loop ``asyncio``; ``json`` and ``re``): a
run compiles none of it. None of those modules touches the channel when
imported (the START frame is read in ``_runner.main()``), so nothing of a
run is in the image. The ``-c`` code is boot.py's work on top of what the
set-up already did, and gives the agent boot.py's ``sys.argv`` and
``sys.orig_argv``.

A run starts from the snapshot unless:

* ``HUGIND_SNAPSHOT=0`` (every snapshot) or ``HUGIND_PY_SNAPSHOT=0`` says not to;
* it records or replays (``--record``, ``hugind replay``): the snapshot's str
  hash secret was drawn when it was made, not by the run, so a record would
  not hold it and a replay on another machine (another snapshot) could take
  another path; the plain path draws it through the tape;
* its memory cap is below the memory the snapshot starts with, or its
  environment/preopens are what the snapshot cannot represent
  (``py_snapshot.prepare``);
* the snapshot cannot be made (a warning, once per process and engine
  configuration).

The first run on a machine (per hugind version and engine configuration:
``--strict``'s fuel has its own) makes the snapshot, 15-35 s plus compiling
it; a line on stderr says so when it takes longer than ``NOTICE_AFTER_S``.
Processes making it at once wait for the first (a lock in the cache directory).
"""

from __future__ import annotations

import os
import sys
import threading
import time
import weakref
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hugind.sandbox import py_snapshot
from hugind.wasm.snapshot import SnapshotError

if TYPE_CHECKING:
    from hugind.sandbox.engine import EngineConfig
    from hugind.sandbox.instance import GuestInstance, GuestIO

CALL_EXPORT = py_snapshot.CALL_EXPORT
HEAD = ("python", "-I", "-S", "-B")  # the plain path's options (py_runtime.ARGV)
LIBRARY = "/.hugind"
PRELOAD = ("hugind", "hugind._runner", "hugind._loop", "hugind._tools", "hugind.fs", "hugind.team", "json", "re")
BOOT_ARGV = [*HEAD, f"{LIBRARY}/boot.py"]
# boot.py's work on top of the set-up's (which put /.hugind first on sys.path and
# imported the library): the agent's folder, then the runner. sys.argv and
# sys.orig_argv as boot.py's own run has them.
CODE = (
    "import sys\n"
    f"sys.argv[:] = [{BOOT_ARGV[-1]!r}]\n"
    f"sys.orig_argv[:] = {BOOT_ARGV!r}\n"
    "sys.path.insert(0, '/')\n"
    "from hugind import _runner\n"
    "_runner.main()\n"
)
ARGV = (*HEAD, "-c", CODE)
NOTICE_AFTER_S = 2.0
_OFF = ("0", "false", "no", "off")

starts: Counter[str] = Counter()  # "snapshot" / "plain": how this process's runs started (tests read it)
_snapshots: dict[Any, py_snapshot.PySnapshot | None] = {}
_lock = threading.Lock()
_planned: weakref.WeakKeyDictionary[GuestInstance, Planned] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class Planned:
    """A run the snapshot will start: the snapshot, its WASI argv, and its input."""

    snap: py_snapshot.PySnapshot
    argv: tuple[str, ...]
    run_input: py_snapshot.RunInput


def enabled() -> bool:
    names = ("HUGIND_SNAPSHOT", "HUGIND_PY_SNAPSHOT")
    return all(os.environ.get(name, "1").strip().lower() not in _OFF for name in names)


# Digests of the guest library by the stat of each of its files (as py_interpreter.py
# remembers the interpreter's check): a process hashes it once while nothing changed.
# A warm server's children get the server's entry (hugind/warm/preload.py loads the snapshot).
_library_digests: dict[tuple[Any, ...], str] = {}


def library_digest() -> str:
    """The guest library's files, hashed: modules preloaded from them are in the image."""
    from hugind.sandbox.py_interpreter import guest_library, stat_stamp
    from hugind.sha256 import sha256

    root = guest_library()
    paths = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        paths += [os.path.join(dirpath, name) for name in sorted(filenames)]
    stamps = tuple(stat_stamp(os.stat(path)) for path in paths)
    key = (str(root), tuple(paths), stamps)
    known = _library_digests.get(key)
    if known is not None:
        return known
    digest = sha256()
    read = []
    for path in paths:
        digest.update(os.path.relpath(path, root).encode() + b"\0")
        with open(path, "rb") as f:
            read.append(stat_stamp(os.fstat(f.fileno())))
            data = f.read()
        digest.update(len(data).to_bytes(8, "little") + data)
    value = digest.hexdigest()
    if tuple(read) == stamps:  # nothing changed while it was read: the stamps stand for these bytes
        _library_digests[key] = value
    return value


def snapshot_for(engine_config: EngineConfig) -> py_snapshot.PySnapshot | None:
    """The agents' snapshot for this engine configuration: from the cache, or made now
    (once per process; None, with one warning, when it cannot be made)."""
    if engine_config in _snapshots:
        return _snapshots[engine_config]
    with _lock:
        if engine_config not in _snapshots:
            _snapshots[engine_config] = _load(engine_config)
        return _snapshots[engine_config]


def _options() -> dict[str, Any]:
    """py_snapshot.load's options for the agents' snapshot (its cache key's parts)."""
    from hugind.sandbox.py_interpreter import RUNTIME_SHA256, guest_library

    return {
        "digest": RUNTIME_SHA256,
        "preload": PRELOAD,
        "head": HEAD,
        "fixed": ((guest_library(), LIBRARY),),
        "path": (LIBRARY,),
        "fixed_digest": library_digest(),
    }


def load_cached(engine_config: EngineConfig) -> py_snapshot.PySnapshot | None:
    """The agents' snapshot if the module cache holds it, else None: never made here.
    For the warm server, which loads it before it forks (hugind/warm/preload.py): a run
    then finds it in this process's module cache under the same key."""
    from hugind.sandbox.py_interpreter import verified_runtime

    if not enabled():
        return None
    try:
        return py_snapshot.load(verified_runtime(), engine_config, make=False, **_options())
    except SnapshotError:
        return None


def _load(engine_config: EngineConfig) -> py_snapshot.PySnapshot | None:
    from hugind.sandbox.py_interpreter import verified_runtime

    runtime = verified_runtime()
    options = _options()
    if enabled():
        try:  # in the cache, as for nearly every run: no notice timer, no lock
            return py_snapshot.load(runtime, engine_config, make=False, **options)
        except SnapshotError:
            pass  # to be made (or a process making it to be waited for): below
    started = time.monotonic()
    noticed = threading.Event()

    def notice() -> None:
        noticed.set()
        sys.stderr.write(
            "hugind: making the Python start-up snapshot (once per machine, hugind version and engine "
            "configuration; about a minute)...\n"
        )
        sys.stderr.flush()

    timer = threading.Timer(NOTICE_AFTER_S, notice)
    timer.daemon = True
    timer.start()
    try:
        with _build_lock():
            snap = py_snapshot.load_or_none(runtime, engine_config, **options)
    finally:
        timer.cancel()
    if noticed.is_set():
        sys.stderr.write(f"hugind: the Python start-up snapshot is ready ({time.monotonic() - started:.0f} s)\n")
    return snap


class _build_lock:
    """An exclusive lock in the private cache directory while a snapshot is looked up or made,
    so that processes starting together make it once. No cache directory: no lock."""

    def __enter__(self) -> None:
        self._fd: int | None = None
        from hugind.paths import cache_root
        from hugind.sandbox.engine import _private_dir

        directory = _private_dir(cache_root() / "modules")
        if directory is None:
            return
        try:
            import fcntl

            self._fd = os.open(directory / "py-snapshot.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            fcntl.flock(self._fd, fcntl.LOCK_EX)
        except OSError:
            if self._fd is not None:
                os.close(self._fd)
            self._fd = None

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the lock


def plan(config: Any, engine_config: EngineConfig, io: GuestIO) -> Planned | None:
    """The snapshot start of this run (its io as the plain path would have it), or None."""
    if config.tap is not None or not enabled():
        return None
    snap = snapshot_for(engine_config)
    if snap is None:
        return None
    from hugind.sandbox.instance import _initial_memory_bytes

    if _initial_memory_bytes(snap.module) > config.limits.memory_bytes:
        return None  # the plain path starts smaller and meets the cap where it would
    try:
        run_input = py_snapshot.prepare(snap, ARGV, list(io.env.items()), [guest for _, guest, _ in io.preopens])
    except SnapshotError:
        return None  # documented limits of the snapshot (an environment, too many preopens): no surprise
    return Planned(snap, ARGV, run_input)


def started(instance: GuestInstance, planned: Planned) -> None:
    _planned[instance] = planned
    starts["snapshot"] += 1


def count(kind: str) -> None:
    starts[kind] += 1


def call_args(instance: GuestInstance) -> tuple[int, int, int] | None:
    """The arguments of the runner's call for an instance started from the snapshot (its
    input written now, before any of its code runs), or None: it runs ``_start``."""
    planned = _planned.pop(instance, None)
    if planned is None:
        return None
    return py_snapshot.write_input(instance.store, instance.instance, planned.snap, planned.run_input)


def enter_interpreter(driver: Any) -> None:
    """Run the interpreter to its end: ``_start``, or the snapshot's call of its runner
    (the same entry through the driver: deadline, traps, exits, output and memory caps)."""
    call = call_args(driver.instance)
    if call is None:
        driver.enter("_start")
        return
    if not driver.enter(CALL_EXPORT, *call):
        from hugind.errors import EngineError

        raise EngineError("the Python runner failed inside the snapshot's interpreter (see stderr)")
