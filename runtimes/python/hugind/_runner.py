"""Runs the agent: reads the start message, executes the entry, reports the outcome.

The entry runs as module ``__main__``; if it defines ``main``, that is called
after (with the run's input when it takes an argument; a coroutine function is
run on hugind's event loop) and its return value is the result. The outcome is
reported like a raw wasm guest's: ``agent.done`` or ``agent.error``.
"""

import sys
import types

from hugind import _asyncio_hook, _channel, _ops, _state, _wire


def _start_message():
    kind, _, payload = _channel.read_frame()
    if kind != _channel.START:
        raise _channel.ProtocolError(f"the first frame from the host is of kind {kind}, not START")
    return _wire.loads(payload)


def _run_entry(msg):
    name = "/" + msg["entry"]
    code = compile(msg["source"], name, "exec")
    module = types.ModuleType("__main__")
    module.__file__ = name
    module.__builtins__ = __builtins__
    sys.modules["__main__"] = module
    exec(code, module.__dict__)
    main = module.__dict__.get("main")
    if msg.get("mode") == "agentic" or not callable(main):
        return False, None
    value = main(_state.input) if _takes_input(main) else main()
    if hasattr(value, "__await__"):
        value = _run_awaitable(value)
    return True, value


def _takes_input(func):
    code = getattr(func, "__code__", None)
    if code is None:  # a callable object, a builtin: inspect knows
        import inspect

        return bool(inspect.signature(func).parameters)
    return code.co_argcount - (1 if hasattr(func, "__self__") else 0) > 0 or bool(code.co_flags & 0x04)


def _run_awaitable(awaitable):
    import asyncio

    async def outer():
        return await awaitable

    return asyncio.run(outer())


def _stack(exc):
    """The traceback from the agent's own frames on (this runner's are noise to its author)."""
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("/.hugind/")]
    lines = traceback.format_list(frames)
    return "Traceback (most recent call last):\n" + "".join(lines) if lines else ""


def _report_error(name, message, stack=""):
    _ops.call("agent.error", {"name": name, "message": message, "stack": stack})


def _report_done(has_value, value):
    if has_value:
        try:
            value = _wire.loads(_wire.dumps(value))
        except (TypeError, ValueError) as exc:
            _report_error("TypeError", f"the agent's result is not JSON: {exc}")
            return
    try:
        _ops.call("agent.done", {"has_value": has_value, "value": value})
    except Exception as exc:
        message = f"the host refused the agent's result: {type(exc).__name__}: {exc}"
        _report_error("InvalidResult", message)


def _flush():
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - contextlib costs the guest ~25 ms to import
            stream.flush()
        except Exception:
            pass


def main():
    msg = _start_message()
    _state.set_up(msg)
    # Line by line, as a JS agent's print: a run stopped by its deadline keeps what it printed.
    sys.stdout.reconfigure(line_buffering=True)
    # The entry's folder comes first on sys.path, as a script's does (boot.py put the agent's folder there).
    folder = "/" + str(msg.get("entry") or "").rpartition("/")[0]
    if sys.path and sys.path[0] == "/" and folder != "/":
        sys.path[0] = folder
    _asyncio_hook.install()
    try:
        has_value, value = _run_entry(msg)
    except SystemExit as stop:
        _flush()
        code = stop.code
        if code is None or code == 0:
            _report_done(False, None)
        elif isinstance(code, int):
            _report_error("SystemExit", f"the agent exited with status {code}")
        else:
            _report_error("SystemExit", str(code))
        return
    except BaseException as exc:
        _flush()
        _report_error(type(exc).__name__, str(exc), _stack(exc))
        return
    _flush()
    _report_done(has_value, value)
    if msg.get("mode") == "agentic":
        from hugind import _tools

        _tools.serve()
        _flush()
