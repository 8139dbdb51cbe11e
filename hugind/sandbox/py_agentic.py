"""Agentic mode for Python guests: the interpreter stays alive and serves tool calls.

A JS agent's tools are called through an export (``hugind_tool``) while the
host runs the LLM loop between calls. The interpreter has one entry point,
``_start``, which returns only when the agent is over, so in agentic mode it
runs on a thread of its own (as does the snapshot's call of its runner): the entry registers its tools and reports
``agent.done``, then the guest waits on the host-call fd, where the host
sends each tool call as a ``TOOL`` frame and, when the run ends, ``END``.
The guest answers with ``tool.result``, the same op as a JS guest; the host's
loop (``agentic_run.py``) sees no difference. The guest is still entered by
one thread only, and the store used by that thread only until it has ended.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hugind.errors import AgentFailed, EngineError
from hugind.sandbox.hostcall_fd import END, TOOL, HostChannel

if TYPE_CHECKING:
    from hugind.host.agent_state import AgentState
    from hugind.sandbox.driver import GuestDriver

WAIT_S = 0.005  # how often a host wait looks at the guest's progress, the deadline and cancellation
END_GRACE_S = 2.0  # how long the guest may take to return from _start after END before it is stopped


class PythonAgentic:
    """One agentic Python guest, running its ``_start`` on a thread."""

    def __init__(self, driver: GuestDriver, channel: HostChannel, state: AgentState) -> None:
        self.driver = driver
        self.channel = channel
        self.state = state
        self._error: BaseException | None = None
        self._exit: int | None = None
        self._ended = threading.Event()
        self._thread: threading.Thread | None = None
        # Once main has reported, the guest's reads wait for tool calls instead of answering IDLE.
        channel.serving = lambda: state.finished

    def _run(self) -> None:
        from hugind.sandbox.instance import GuestExit
        from hugind.sandbox.py_start import enter_interpreter

        try:
            enter_interpreter(self.driver)
        except GuestExit as exit_:
            self._exit = exit_.code
        except BaseException as exc:  # re-raised on the host's thread
            self._error = exc
        finally:
            self._ended.set()

    def start(self) -> None:
        """Run the entry until it has registered its tools and reported (``agent.done``)."""
        self._thread = threading.Thread(target=self._run, name="hugind-python-guest", daemon=True)
        self._thread.start()
        self._wait(lambda: self.state.finished, "the agent's module")

    def _wait(self, done: Callable[[], bool], what: str) -> None:
        while not done():
            self.driver.remaining()  # the deadline and cancellation, as the pump checks them
            if self._ended.wait(WAIT_S) and not done():
                if self._error is not None:
                    raise self._error
                raise AgentFailed(
                    "Exit", f"the Python interpreter ended (status {self._exit}) before {what} had finished"
                )

    def call_tools(self, calls: list[tuple[str, dict[str, Any]]], call_ids: Any) -> list[tuple[bool, Any]]:
        ids = []
        for name, args in calls:
            call_id = next(call_ids)
            ids.append(call_id)
            self.state.tool_calls_running[call_id] = (name, args)
            payload = {"call_id": call_id, "name": name, "args": json.dumps(args, ensure_ascii=False)}
            self.channel.push(TOOL, call_id, json.dumps(payload, ensure_ascii=False).encode())
        results = self.state.tool_results
        self._wait(lambda: all(i in results for i in ids), "a tool call")
        return [results.pop(i) for i in ids]

    def close(self) -> None:
        """Tell the guest the run is over; stop it if it does not return in time."""
        thread = self._thread
        if thread is None or not thread.is_alive():
            return
        self.channel.push(END, 0, b"")
        thread.join(END_GRACE_S)
        if thread.is_alive():
            self.driver.instance.interrupt("the run ended while the agent was still running")
            thread.join(END_GRACE_S)
        if thread.is_alive():  # pragma: no cover - a guest that ignores its epoch deadline
            raise EngineError("the Python guest did not stop at the end of the run")
