"""What a process's first guest of a module builds once, built ahead of any run.

A process's first run of a module makes, per engine, what every later run of
the same process reuses: the linker holding hugind's host functions and the
module's ``InstancePre`` (instance.py) and its table of exports (raw_export.py),
the WASI forwarder of a Python guest's
host-call channel (hostcall_fd.py), the memory the module starts with. None
of it holds anything of a run: each is a function of the engine, the module
and hugind's own code. The warm server (hugind/warm/preload.py) builds them
before it forks, so its children find them as a second run in one process
does (~8 ms of a trivial Python run's child otherwise, measured).

They are keyed as they are in a single process: by the engine and module
objects. A changed interpreter or guest library is a new snapshot key, so a
child loads another module, which is linked afresh; hugind's code changing
makes the server stale (warm/server.py). One input is the process's, not the
code's: whether host functions take the raw path (raw_ffi.py). A child whose
client overrules the server's verdict calls ``forget_links``, and links anew.

Nothing here compiles: compiling starts wasmtime's worker threads, and the
server must stay single-threaded to fork. The forwarder comes from the module
cache only (``forwarder`` says whether it was there).
"""

from __future__ import annotations

import wasmtime

from hugind.sandbox import hostcall_fd, instance, raw_export
from hugind.sandbox.engine import NotCached


def link(engine: wasmtime.Engine, module: wasmtime.Module, *, inherit_stdin: bool, channel: bool) -> None:
    """Link ``module`` as a run with this stdin and channel would (a run with a tap, which
    ``hugind run`` has only when recording, links its own)."""
    instance._initial_memory_bytes(module)
    raw_export.export_table(module)
    instance._linked_for(engine, inherit_stdin, False, channel).pre(module)


def forwarder(engine: wasmtime.Engine) -> bool:
    """Load the host-call channel's forwarder from the module cache; False if it is not there."""
    try:
        hostcall_fd._forwarder_parts(engine, make=False)
    except NotCached:
        return False
    return True


def forget_links() -> None:
    """Drop every linker made so far (their host functions follow the raw-path verdict of
    when they were made); the next run links anew."""
    with instance._linked_lock:
        instance._linked.clear()
