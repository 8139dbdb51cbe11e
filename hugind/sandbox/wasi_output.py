"""A guest's store after its run: dropped (a large one off the run's path), and waited for at exit.

Dropping a store unmaps the memory its run wrote: ~0.04 ms for a trivial JS
run, ~0.06 ms more per MiB written. A store whose linear memory is at most
``DROP_HERE_BYTES`` is dropped by the caller: handing it to a thread costs more
than that (measured, back-to-back runs of a trivial agent: ~0.14 ms per run of
thread wake-ups, GIL hand-overs and ~9 context switches, against ~0.05 ms for
dropping it in place; docs/design.md, round 3). A larger one is handed to a
daemon thread that drops it while the caller goes on (the drop runs in
wasmtime, without the GIL).

A store whose guest wrote output hands its stdout/stderr writers to wasmtime's
worker threads, which drop them a little after the store itself; each drop
releases the Python callback, so it runs Python code on that worker thread.
One that lands while the interpreter is finalizing kills the thread under
Rust code that cannot unwind, and the process aborts. So hugind counts the
writers whose store is gone but whose callback is still held, and at exit
(before finalization) drops the stores still alive and waits for the count to
reach zero.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import queue
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

EXIT_WAIT_S = 2.0  # at most this long at exit; each writer takes microseconds
# Up to this much linear memory the drop costs at most ~1 ms (all of it written),
# and a run that wrote that much spent far longer faulting it in.
DROP_HERE_BYTES = 16 * 1024 * 1024

_cond = threading.Condition()
_draining = 0  # callbacks of dropped stores that wasmtime still holds
_stores = 0  # WASI contexts with tracked callbacks, alive
_guests: weakref.WeakSet[Any] = weakref.WeakSet()  # objects with release(): drop the store now
_refs: set[weakref.ref[Any]] = set()  # the weak references below, kept until their callback ran
_to_drop: queue.SimpleQueue[Any] = queue.SimpleQueue()
_dropping = 0  # stores handed to the dropping thread, not yet dropped
_dropper_started = False


@dataclass
class _Hold:
    store_gone: bool = False
    dropped: bool = False  # wasmtime let go of the callback


class Tracked:
    """The callbacks of one WASI context, followed until wasmtime lets go of them.

    The context ends with its store, or earlier when a kept store's context is
    replaced (recycle.py): ``context_gone`` says so."""

    def __init__(self, holds: list[_Hold]) -> None:
        self.holds = holds
        self.store_ref: weakref.ref[Any] | None = None
        self.gone = False

    def context_gone(self) -> None:
        global _draining, _stores
        with _cond:
            if self.gone:
                return
            self.gone = True
            if self.store_ref is not None:
                _refs.discard(self.store_ref)  # its callback must not count this context again
                self.store_ref = None
            _stores -= 1
            for hold in self.holds:
                hold.store_gone = True
                if not hold.dropped:
                    _draining += 1
            _cond.notify_all()


def track(store: Any, callbacks: list[Callable[[bytes], None]], guest: Any) -> Tracked:
    """Follow ``callbacks`` (set on ``store``'s WASI config) until wasmtime lets go of them."""
    global _stores
    tracked = Tracked([_Hold() for _ in callbacks])
    # Plain weakref callbacks, not weakref.finalize: finalize's own exit hook
    # turns every finalizer off, and it may run before ours.
    with _cond:
        for callback, hold in zip(callbacks, tracked.holds, strict=True):
            _refs.add(weakref.ref(callback, lambda ref, hold=hold: _dropped(ref, hold)))
        tracked.store_ref = weakref.ref(store, lambda ref: tracked.context_gone())
        _refs.add(tracked.store_ref)
        _stores += 1
    _guests.add(guest)
    return tracked


def _dropped(ref: weakref.ref[Any], hold: _Hold) -> None:
    global _draining
    with _cond:
        _refs.discard(ref)
        hold.dropped = True
        if hold.store_gone:
            _draining -= 1
            _cond.notify_all()


def drop_in_place(memory_bytes: int | None) -> bool:
    """Whether a store with ``memory_bytes`` of linear memory (None: unknown, its
    instantiation failed) is best dropped by its caller rather than by drop_later."""
    return memory_bytes is not None and memory_bytes <= DROP_HERE_BYTES


def drop_later(store: Any) -> None:
    """Drop ``store`` on the dropping thread; the caller must hold no other reference to it."""
    global _dropping, _dropper_started
    with _cond:
        _dropping += 1
        if not _dropper_started:
            threading.Thread(target=_drop_forever, name="hugind-store-drop", daemon=True).start()
            _dropper_started = True
    _to_drop.put(store)


def _drop_forever() -> None:
    global _dropping
    while True:
        store = _to_drop.get()
        del store  # the last reference: wasmtime frees the store here, on this thread
        with _cond:
            _dropping -= 1
            _cond.notify_all()


def _after_fork_in_child() -> None:
    # The dropping thread does not survive a fork, and stores queued in the
    # parent are the parent's: a child starts its own thread and counts afresh.
    global _cond, _to_drop, _dropping, _dropper_started
    _cond = threading.Condition()
    _to_drop = queue.SimpleQueue()
    _dropping = 0
    _dropper_started = False


os.register_at_fork(after_in_child=_after_fork_in_child)


def interrupt_all(reason: str) -> None:
    """Stop every guest of this process at its next epoch check (Ctrl-C: hugind/ctrl_c.py).
    Safe from any thread: ``interrupt`` takes the guest's store lock."""
    for guest in list(_guests):
        with contextlib.suppress(Exception):  # one released meanwhile must not spare the rest
            guest.interrupt(reason)


def outstanding() -> tuple[int, int]:
    """(stores alive, callbacks of dropped stores not yet released): for tests."""
    with _cond:
        return _stores, _draining


@atexit.register
def _wait_at_exit() -> None:
    with _cond:
        alive = _stores - _dropping  # stores queued for dropping are on their way
    if alive:
        for guest in list(_guests):
            with contextlib.suppress(Exception):  # on the way out: one odd guest must not keep the rest
                guest.release()
        with _cond:
            alive = _stores - _dropping
        if alive:
            gc.collect()  # stores kept only by garbage cycles (an exception's frames)
    with _cond:
        _cond.wait_for(lambda: _dropping == 0 and _draining == 0, EXIT_WAIT_S)
