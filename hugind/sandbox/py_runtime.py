"""``.py`` agents: the seam that starts the interpreter for an agent, and what it sees.

The interpreter itself (the pinned file, its check, the compiled module) is
py_interpreter.py. The module imports only WASI preview 1; it reaches the host through the
host-call fd (hostcall_fd.py). Its standard library is embedded in it
(wasi-vfs); the host's site-packages are never visible. What the guest sees:

* ``/.hugind``: the guest library (runtimes/python), read-only; its preopen
  is the run's first, fd 3, the host-call channel;
* ``/``: a private read-only copy of the agent's ``.py`` files, from the bytes
  its digest covers (py_sources.py; an agent folder with ``agent.yaml``
  only: a bare ``file.py`` gets its source in the start message and no
  folder), or the folder itself where the policy grants it;
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
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hugind import __version__
from hugind.errors import AgentFailed, EngineError, InvalidModule, UsageError
from hugind.sandbox import py_sources
from hugind.sandbox.engine import EngineConfig, get_engine
from hugind.sandbox.hostcall_fd import HostChannel
from hugind.sandbox.instance import GuestExit, GuestInstance, GuestIO
from hugind.sandbox.py_interpreter import (  # noqa: F401  (part of this module's face: tests, pinning)
    INSTALL_HINT,
    RUNTIME_FILE,
    RUNTIME_SHA256,
    RUNTIME_SIZE,
    guest_library,
    python_module,
    runtime_path,
    verified_runtime,
)
from hugind.sandbox.py_sources import PINNED_SOURCES

if TYPE_CHECKING:
    from hugind.host.dispatch import Dispatcher
    from hugind.sandbox.driver import GuestDriver

# A session's configuration (session.SessionConfig; not imported: session imports this module).
SessionConfig = Any

LIB_GUEST_PATH = "/.hugind"
BOOT = f"{LIB_GUEST_PATH}/boot.py"
# -I: no PYTHON* variable, no user site; -S: no site module (nothing of any site-packages);
# -B: no .pyc written (every directory the guest sees of the agent is read-only anyway).
ARGV = ["python", "-I", "-S", "-B", BOOT]
MAX_SOURCE_BYTES = 16 * 1024 * 1024
PINNED_SOURCE = "python_source"  # Agent.extra key: the entry's text verified by --expect, run as it is
MAX_PINNED_FILES = 10_000
BUILD_GRACE_S = 1.0  # a start that took longer made the snapshot: the run's deadline is moved by it


def _agent_folder(config: SessionConfig, existing: list[tuple[Path, str, bool]]) -> list[tuple[Path, str, bool]]:
    """What the agent sees of its folder at ``/``, read-only, unless the policy already
    preopens the folder: a private copy of its ``.py`` files from the bytes its digest
    covers (py_sources.py), never the folder itself, whose other files the policy decides."""
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
    sources = agent.extra.get(PINNED_SOURCES)
    if not isinstance(sources, dict):
        sources = pin_sources(agent)[1]
    return [(py_sources.materialize(sources), "/", False)]


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
    message = json.dumps(start_message(config), ensure_ascii=False).encode()
    channel = HostChannel(get_engine(engine_config), dispatcher, message, cancelled=config.cancelled)
    preopens = [(guest_library(), LIB_GUEST_PATH, False)]  # first: fd 3, the channel
    folder = _agent_folder(config, io.preopens)
    for host, _, _ in folder:  # py_sources' private copy goes with the run's channel (the instance holds it)
        py_sources.tie_to(channel, host)
    preopens += folder
    preopens += [p for p in io.preopens if p[1] != LIB_GUEST_PATH]
    io = replace(io, argv=list(ARGV), preopens=preopens)
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
    """Run the interpreter to its end (py_start.enter_interpreter)."""
    from hugind.sandbox import py_start

    py_start.enter_interpreter(driver)


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
