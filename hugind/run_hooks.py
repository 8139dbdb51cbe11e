"""Calling a run's observers (hugind/observer.py): registration check, order, failure rule.

``RunHooks`` is built once per run from ``RunOptions.observers``. It checks
each observer as pluggy checks an implementation: every method whose name
looks like a hook (``on_*``, ``wrap_*``, ``is_*``) must be one of the
protocol's, with the protocol's parameters. Then it calls, for each hook,
only the observers that override it, in registration order.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from hugind.errors import UsageError
from hugind.observer import HOOK_PREFIXES, HOOKS, RunObserver

if TYPE_CHECKING:
    from hugind.agentic.events import LoopEvent

T = TypeVar("T")


def _params(fn: Callable[..., Any]) -> list[str]:
    """A method's parameter names, without self (no inspect: it costs every cold run an import)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return ["?"]
    return list(code.co_varnames[1 : code.co_argcount + code.co_kwonlyargcount])


_SPEC_PARAMS = {name: _params(getattr(RunObserver, name)) for name in HOOKS}


def check_observer(observer: object) -> frozenset[str]:
    """The hooks ``observer`` implements; UsageError for a hook-like name the protocol lacks,
    or a hook whose parameters are not the protocol's (a typo would otherwise never be called)."""
    return _check_class(type(observer))


@functools.lru_cache(maxsize=256)
def _check_class(kind: type) -> frozenset[str]:
    """Per class, once: a run's observers are checked on every run, and dir() is not free."""
    implemented = set()
    for name in dir(kind):
        if not name.startswith(HOOK_PREFIXES):
            continue
        attr = getattr(kind, name)
        if not callable(attr):
            continue
        if name not in _SPEC_PARAMS:
            raise UsageError(f"run observer {kind.__name__}: {name} is not a hook (known hooks: {', '.join(HOOKS)})")
        if attr is getattr(RunObserver, name):
            continue  # the protocol's default: nothing to call
        if _params(attr) != _SPEC_PARAMS[name]:
            raise UsageError(
                f"run observer {kind.__name__}: {name}({', '.join(_params(attr))}) does not take the hook's "
                f"parameters ({', '.join(_SPEC_PARAMS[name])})"
            )
        implemented.add(name)
    return frozenset(implemented)


class RunHooks:
    def __init__(self, observers: Sequence[RunObserver], warn: Callable[[str], None]) -> None:
        self._by_hook: dict[str, list[RunObserver]] = {name: [] for name in HOOKS}
        for observer in observers:
            for name in check_observer(observer):
                self._by_hook[name].append(observer)
        self._warn = warn
        self._muted: set[int] = set()  # observers whose on_event failed once
        self._event_lock = threading.Lock()

    def has(self, hook: str) -> bool:
        return bool(self._by_hook[hook])

    def wrap(self, hook: str, value: T, *extra: object) -> T:
        """Each observer wraps what the ones before it returned (a failure fails the run)."""
        for observer in self._by_hook[hook]:
            value = getattr(observer, hook)(value, *extra)
        return value

    def notify(self, hook: str, *args: object) -> None:
        """Every observer, in order; the first failure fails the run (on_event: see emit)."""
        for observer in self._by_hook[hook]:
            getattr(observer, hook)(*args)

    def cancelled_check(self) -> Callable[[], bool] | None:
        """What the sandbox polls between host calls, or None when nobody can cancel."""
        polled = self._by_hook["is_cancelled"]
        if not polled:
            return None
        return lambda: any(o.is_cancelled() for o in polled)

    # ---- events: the one hook whose failure does not fail the run --------------------

    def event_sink(self) -> _EventFanout | None:
        return _EventFanout(self) if self._by_hook["on_event"] else None

    def _emit(self, event: LoopEvent) -> None:
        for observer in self._by_hook["on_event"]:
            if id(observer) in self._muted:
                continue
            try:
                observer.on_event(event)
            except OSError:
                # The stream the events are written to is gone (a --json reader that left):
                # the command's own output is lost, which ends it as a lost stdout does.
                raise
            except Exception as exc:
                with self._event_lock:
                    if id(observer) in self._muted:
                        continue
                    self._muted.add(id(observer))
                self._warn(f"{type(observer).__name__} failed on an event ({exc}); its later events are dropped")


class _EventFanout:
    """An agentic EventSink that hands each event to every on_event observer."""

    def __init__(self, hooks: RunHooks) -> None:
        self._hooks = hooks

    def emit(self, event: LoopEvent) -> None:
        self._hooks._emit(event)
