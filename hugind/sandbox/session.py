"""One agent instance with its host: policy -> host ops -> wasm guest -> driver.

``AgentSession`` is what the run orchestration (and the agentic loop's tool
executor) talk to. It knows both guest kinds: the JS engine (the agent's
modules are loaded through the host) and raw ``.wasm`` agents.
"""

from __future__ import annotations

import functools
import itertools
import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hugind import __version__
from hugind.errors import AgentFailed, EngineError, InvalidModule, LimitExceeded
from hugind.host import agent_state, clock, modules
from hugind.host.agent_state import AgentState
from hugind.host.dispatch import Dispatcher
from hugind.host.registry import HostContext, Op
from hugind.manifest import Agent
from hugind.sandbox.driver import GuestDriver
from hugind.sandbox.engine import EngineConfig
from hugind.sandbox.instance import GuestExit, GuestInstance, GuestIO, GuestLimits
from hugind.sandbox.interpose import GuestTap
from hugind.sandbox.js_engine import check_artifact_engine, engine_module
from hugind.sandbox.raw_wasm import PINNED_WASM, load_agent_module

JS_STACK_LIMIT = 786432
JS_MEMORY_HEADROOM = 16 * 1024 * 1024  # left for the engine itself past the JS heap cap

# What json.dumps(message, ensure_ascii=False) writes, without a new encoder per call.
_encode_message = json.JSONEncoder(ensure_ascii=False).encode


@functools.lru_cache(maxsize=64)
def _entry_name(entry: Path, root: Path) -> str:
    """The entry's module name (pathlib's relative_to is slow, and its answer never changes)."""
    return entry.relative_to(root).as_posix()


def base_ops() -> list[Op]:
    """Ops every guest gets; capabilities are added by the caller."""
    return [*agent_state.OPS, *modules.OPS, *clock.OPS]


@dataclass
class SessionConfig:
    agent: Agent
    policy: Any  # hugind.policy.PolicyEngine
    limits: GuestLimits
    io: GuestIO
    ops: Iterable[Op]
    input: dict[str, Any]
    timeout_s: float
    services: dict[str, Any] = field(default_factory=dict)
    team: bool = False
    tap: GuestTap | None = None  # watches the guest's host calls and WASI reads (--record, hugind replay)
    cancelled: Callable[[], bool] | None = None  # polled between host calls (hugind serve's cancel)
    fresh_instance: bool = False  # never start on, nor leave, a kept instance (sandbox/recycle.py)


class AgentSession:
    def __init__(self, config: SessionConfig) -> None:
        self.config = config
        agent = config.agent
        self.state = AgentState()
        art = agent.extra.get("artifact")
        if art is not None:
            check_artifact_engine(art.engine_sha256)
            self.modules = modules.ModuleSource(agent.root, dict(art.modules), sealed=True)
        else:
            self.modules = modules.ModuleSource(agent.root)
        self.ctx = HostContext(
            policy=config.policy,
            agent_root=agent.root,
            deadline=time.monotonic() + config.timeout_s,
            services={"agent": self.state, "modules": self.modules, **config.services},
        )
        if config.tap is None:
            self.dispatcher = Dispatcher(self.ctx, config.ops)
        else:
            self.dispatcher = config.tap.dispatcher(self.ctx, config.ops)
        engine_config = EngineConfig(fuel=config.limits.fuel is not None)
        self.is_js = agent.runtime == "js"
        self.is_python = agent.runtime == "python"
        if self.is_python:  # CPython on WASI (py_runtime.py): its own start path
            from hugind.sandbox import py_runtime

            self.instance = py_runtime.start_interpreter(config, self.dispatcher, engine_config, self.ctx.remaining())
        else:
            pinned = agent.extra.get(PINNED_WASM)  # bytes verified by --expect: run those, not a re-read
            module = (
                engine_module(engine_config) if self.is_js else load_agent_module(agent.entry, engine_config, pinned)
            )
            self.instance = GuestInstance(
                module,
                self.dispatcher,
                config.io,
                config.limits,
                engine_config,
                blame=EngineError if self.is_js else InvalidModule,
                budget_s=self.ctx.remaining(),
                tap=config.tap,
                keep=not config.fresh_instance,
            )
        self.driver = GuestDriver(self.instance, self.dispatcher, self.ctx.deadline, config.cancelled)
        self._call_ids = itertools.count(1)
        self._python: Any = None  # an agentic Python guest's thread (py_agentic.PythonAgentic)
        self._guest_lock = threading.Lock()  # the guest is single-threaded
        self._initialize()

    def _initialize(self) -> None:
        # The JS engine's snapshot has no `_initialize` (its constructors ran when
        # the image was made); the engine as built (HUGIND_SNAPSHOT=0) and raw
        # wasm reactors still need it.
        if self.instance.has_export("_initialize"):
            self.driver.enter("_initialize")
        # An engine with hugind_js_start is configured by run_main in the same
        # crossing that starts the agent (runtimes/wasm/ABI.md, "Fused start");
        # nothing enters the guest before run_main. One without the separate
        # hugind_js_configure is no hugind JS engine: it fails here, as before.
        # A recorded or replayed run keeps the separate calls: its tap lists
        # the module ops they make.
        self._configured = not self.is_js
        fused = self.instance.has_export("hugind_js_start") and self.instance.has_export("hugind_js_configure")
        if self.is_js and not (fused and self.config.tap is None):
            self._configure()

    def _limits(self) -> tuple[int, int]:
        memory = self.config.limits.memory_bytes
        js_heap = max(memory - JS_MEMORY_HEADROOM, memory // 2)
        return min(js_heap, 2**31 - 1), JS_STACK_LIMIT

    def _configure(self) -> None:
        # Per instance, never in the snapshot: this run's limits, and the engine
        # resets what must be the instance's own (runtimes/wasm/ABI.md, "Snapshot start").
        self.driver.enter("hugind_js_configure", *self._limits())
        self._configured = True

    # ---- running ----------------------------------------------------------------

    def run_main(self) -> None:
        """Evaluate the entry module (and, in script mode, call its default export)."""
        agent = self.config.agent
        entry_name = _entry_name(agent.entry, agent.root)
        message = {
            "entry": "./" + entry_name,
            "mode": agent.manifest.mode,
            "version": __version__,
            "input": self.config.input,
            "team": self.config.team,
        }
        with self._guest_lock:
            if self.is_python:
                from hugind.sandbox import py_runtime

                self._python = py_runtime.run_interpreter(self.driver, self.state, agent.manifest.mode)
            elif not self._configured and self._start_fused(entry_name, message):
                self.driver.pump_until(lambda: self.state.finished, "the agent")
            elif self.instance.has_export("hugind_main"):
                if not self._configured:
                    self._configure()
                self.driver.send("hugind_main", message)
                self.driver.pump_until(lambda: self.state.finished, "the agent")
            elif self.instance.has_export("_start"):
                self._run_wasi_command()
            else:
                raise InvalidModule("the module exports neither 'hugind_main' nor '_start': nothing to run")
        if self.state.limit_error is not None:
            raise LimitExceeded(f"run stopped: {self.state.limit_error} (permissions.limits.max_output_bytes)")
        if self.state.failure is not None:
            f = self.state.failure
            raise AgentFailed(f.name, f.message, f.stack)

    def _start_fused(self, entry_name: str, message: dict[str, Any]) -> bool:
        """Configure and start in one crossing, the entry's source handed over with the
        start message (no module.resolve/module.load round trip for it). The source
        is read by the same ModuleSource, under the same rules, as module.load would.
        False (nothing done) when the entry is not plain source: prebuilt bytecode,
        or a load error the guest's own import then reports as before."""
        try:
            loaded = self.modules.load(entry_name)
        except Exception:  # the guest's own import then fails as it always did, with the same message
            return False
        source = loaded.get("source")
        if not isinstance(source, str):
            return False
        msg = _encode_message(message).encode()
        name = entry_name.encode()
        code = source.encode()
        if b"\0" in name:
            return False
        ptr = self.instance.write_bytes(b"".join((msg, name, b"\0", code, b"\0")), budget_s=self.driver.remaining())
        self._configured = True
        status = self.driver.enter("hugind_js_start", ptr, len(msg), len(name), len(code), *self._limits())
        if status not in (0, None):
            raise EngineError(f"the guest's hugind_js_start failed with status {status} (see stderr)")
        return True

    def _run_wasi_command(self) -> None:
        """The Javy convention: input on stdin, output on stdout, exit status."""
        try:
            self.driver.enter("_start")
        except GuestExit as exit_:
            if exit_.code != 0:
                raise AgentFailed("Exit", f"the module exited with status {exit_.code}") from None
        if self.dispatcher.pending:
            self.driver.pump_until(lambda: self.dispatcher.pending == 0, "the module")
        self.state.finished = True

    def result(self) -> tuple[bool, Any]:
        return self.state.result()

    def call_tools(self, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[bool, Any]]:
        """Run several registered tools; they interleave in the guest and their
        host work runs in parallel. Results come back in call order."""
        with self._guest_lock:
            if self._python is not None:  # a Python guest serves its tools on its own thread (py_agentic.py)
                return self._python.call_tools(calls, self._call_ids)
            if not self._configured:
                self._configure()
            ids = []
            for name, args in calls:
                call_id = next(self._call_ids)
                ids.append(call_id)
                self.state.tool_calls_running[call_id] = (name, args)
                payload = {"call_id": call_id, "name": name, "args": json.dumps(args, ensure_ascii=False)}
                self.driver.send("hugind_tool", payload)
            results = self.state.tool_results
            self.driver.pump_until(lambda: all(i in results for i in ids), "a tool call")
            return [results.pop(i) for i in ids]

    def close(self) -> None:
        if self._python is not None:
            self._python.close()
        self.dispatcher.close()
        self.instance.release()
