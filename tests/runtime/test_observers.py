"""Run observers (hugind/observer.py): checked when registered, called in a fixed order,
and failing the run on any hook but on_event."""

from __future__ import annotations

from pathlib import Path

import pytest

from hugind.agentic.events import LoopEvent
from hugind.errors import UsageError
from hugind.manifest import load_agent
from hugind.observer import LoopPlan, McpHubs, McpOpener, RunEnd, RunObserver, RunStart
from hugind.policy import AuditLog, PolicyEngine
from hugind.run import RunOptions, run_agent
from hugind.run_hooks import check_observer
from tests.support.chat_server import ChatServer, Reply

SCRIPT = {"main.js": "export default () => 6 * 7;"}
AGENTIC = {"main.js": 'set_system_prompt("Answer.");\n'}


def _options(*observers: RunObserver, **kw) -> tuple[RunOptions, list[bytes]]:
    err: list[bytes] = []
    return RunOptions(stdout=lambda b: None, stderr=err.append, host_env={}, observers=list(observers), **kw), err


class Journal(RunObserver):
    """Writes down each hook as it is called."""

    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log = name, log

    def _saw(self, hook: str) -> None:
        self.log.append(f"{self.name}.{hook}")

    def wrap_audit(self, audit: AuditLog | None, path: Path | None) -> AuditLog | None:
        self._saw("wrap_audit")
        return audit

    def on_policy(self, engine: PolicyEngine) -> None:
        self._saw("on_policy")

    def wrap_backend(self, backend):
        self._saw("wrap_backend")
        return backend

    def on_start(self, start: RunStart) -> None:
        self._saw("on_start")

    def wrap_mcp(self, opener: McpOpener) -> McpOpener:
        self._saw("wrap_mcp")
        return opener

    def wrap_guest(self, tap):
        self._saw("wrap_guest")
        return tap

    def wrap_chat(self, connect):
        self._saw("wrap_chat")
        return connect

    def wrap_loop(self, plan: LoopPlan) -> LoopPlan:
        self._saw("wrap_loop")
        return plan

    def on_session_closing(self, session) -> None:
        self._saw("on_session_closing")

    def on_end(self, end: RunEnd) -> None:
        self._saw(f"on_end({type(end.error).__name__ if end.error else 'ok'})")


def test_hooks_run_in_the_documented_order_observers_in_registration_order(make_agent):
    log: list[str] = []
    agent = load_agent(make_agent(SCRIPT))
    options, _ = _options(Journal("a", log), Journal("b", log))
    assert run_agent(agent, options).value == 42
    hooks = ["wrap_audit", "on_policy", "wrap_backend", "on_start", "wrap_mcp", "wrap_guest"]
    hooks += ["on_session_closing", "on_end(ok)"]
    assert log == [f"{who}.{hook}" for hook in hooks for who in ("a", "b")]


def test_the_agentic_hooks_come_between_the_session_and_its_end(make_agent):
    log: list[str] = []
    manifest = {"name": "asker", "entry_point": "main.js", "mode": "agentic", "tool_format": "text"}
    agent = load_agent(make_agent(AGENTIC, manifest=manifest))
    with ChatServer([Reply("the answer")]) as chat:
        options, _ = _options(Journal("a", log), backend=chat.url)
        assert run_agent(agent, options).value == "the answer"
    assert log == [
        "a.wrap_audit",
        "a.on_policy",
        "a.wrap_backend",
        "a.on_start",
        "a.wrap_mcp",
        "a.wrap_guest",
        "a.wrap_chat",
        "a.wrap_loop",
        "a.on_session_closing",
        "a.on_end(ok)",
    ]


def test_a_wrap_hook_wraps_what_the_observers_before_it_returned(make_agent):
    class Tag(RunObserver):
        def __init__(self, tag: str) -> None:
            self.tag = tag

        def wrap_mcp(self, opener: McpOpener) -> McpOpener:
            def opened() -> McpHubs:
                hubs = opener()
                seen.append(self.tag)
                return hubs

            return opened

    seen: list[str] = []
    options, _ = _options(Tag("inner"), Tag("outer"))
    run_agent(load_agent(make_agent(SCRIPT)), options)
    assert seen == ["inner", "outer"]  # the last registered is the outermost


def test_an_unknown_hook_name_is_refused_at_registration(make_agent):
    class Typo(RunObserver):
        def on_polcy(self, engine: PolicyEngine) -> None:
            pass

    with pytest.raises(UsageError, match="on_polcy is not a hook"):
        check_observer(Typo())
    options, _ = _options(Typo())
    with pytest.raises(UsageError, match="on_polcy is not a hook"):
        run_agent(load_agent(make_agent(SCRIPT)), options)


def test_a_hook_with_other_parameters_is_refused():
    class Wrong(RunObserver):
        def wrap_audit(self, audit):
            return audit

    with pytest.raises(UsageError, match=r"wrap_audit\(audit\) does not take the hook's parameters"):
        check_observer(Wrong())
    assert check_observer(Journal("x", [])) >= {"wrap_audit", "on_end"}
    assert check_observer(type("Plain", (RunObserver,), {})()) == frozenset()  # the defaults are no hooks


def test_a_failing_hook_fails_the_run_and_on_end_sees_it(make_agent):
    log: list[str] = []

    class Broken(RunObserver):
        def on_start(self, start: RunStart) -> None:
            raise UsageError("the tape cannot be written")

    options, _ = _options(Broken(), Journal("j", log))
    with pytest.raises(UsageError, match="the tape cannot be written"):
        run_agent(load_agent(make_agent(SCRIPT)), options)
    assert log[-1] == "j.on_end(UsageError)"


def test_a_failing_event_sink_does_not_fail_the_run_and_is_reported_once(make_agent):
    manifest = {"name": "asker", "entry_point": "main.js", "mode": "agentic", "tool_format": "text"}
    agent = load_agent(make_agent(AGENTIC, manifest=manifest))
    got: list[str] = []

    class Gone(RunObserver):
        def on_event(self, event: LoopEvent) -> None:
            raise ValueError("a listener's bug")

    class Kept(RunObserver):
        def on_event(self, event: LoopEvent) -> None:
            got.append(event.type)

    with ChatServer([Reply("still answered")]) as chat:
        options, err = _options(Gone(), Kept(), backend=chat.url)
        assert run_agent(agent, options).value == "still answered"
    warnings = b"".join(err).decode().splitlines()
    assert warnings == ["hugind: warning: Gone failed on an event (a listener's bug); its later events are dropped"]
    assert "final" in got  # the other observer kept getting every event
