"""Agentic mode: the agent's tools, and serving the host's calls of them.

The entry registers tools (``register_tool`` or the ``tool`` decorator) and
sets the system prompt; the host runs the LLM loop and sends each tool call
on the channel (a TOOL frame). Calls run as tasks on hugind's event loop, so
several of one turn interleave and their host work runs in parallel; each
answers with ``tool.result``, as a JS agent's tools do. END ends the serving.
"""

from hugind import _ops, _wire

_tools = {}  # name -> function(args dict)


def register_tool(name, description="", parameters=None, execute=None):
    """Register ``execute(args)`` as tool ``name``: ``args`` is the model's arguments (a dict),
    its return value the text the model reads (a non-string is sent as JSON; None as "OK")."""
    if not isinstance(name, str) or not name:
        raise TypeError("register_tool: 'name' must be a non-empty string")
    if not callable(execute):
        raise TypeError(f"register_tool('{name}'): 'execute' must be a function")
    _ops.call(
        "agent.register_tool",
        {
            "name": name,
            "description": str(description or ""),
            "parameters": parameters or {"type": "object", "properties": {}},
        },
    )
    _tools[name] = execute


def tool(name=None, description=None, parameters=None):
    """A decorator: ``@hugind.tool(parameters={...})`` registers the function, named after it,
    its docstring as the description."""

    def wrap(func):
        register_tool(name or func.__name__, description or (func.__doc__ or "").strip(), parameters, func)
        return func

    return wrap


def set_system_prompt(prompt):
    _ops.call("agent.set_system_prompt", {"prompt": str(prompt)})


def set_max_turns(turns):
    _ops.call("agent.set_max_turns", {"turns": turns})


def get_tool_results():
    """Every tool call the loop has run so far: [{name, args, result, is_error}]."""
    return _ops.call("agent.tool_results")


def _text(value):
    if value is None or value == "":
        return "OK"
    return value if isinstance(value, str) else _wire.dumps(value)


async def _run_tool(msg):
    call_id = msg.get("call_id")
    try:
        execute = _tools.get(msg.get("name"))
        if execute is None:
            raise LookupError(f"unknown tool '{msg.get('name')}'")
        args = _wire.loads(msg.get("args") or "{}")
        value = execute(args)
        if hasattr(value, "__await__"):
            value = await value
        reply = {"call_id": call_id, "value": _text(value)}
    except Exception as exc:
        reply = {"call_id": call_id, "error": {"name": type(exc).__name__, "message": str(exc)}}
    _ops.call("tool.result", reply)


def serve():
    """Serve the host's tool calls until it says the run is over."""
    import asyncio

    async def serving():
        loop = asyncio.get_running_loop()
        over = loop.create_future()
        running = set()

        def on_frame(msg):
            if msg is None:
                if not over.done():
                    over.set_result(None)
                return
            task = loop.create_task(_run_tool(msg))
            running.add(task)
            task.add_done_callback(running.discard)

        _ops.host_frames = on_frame
        await over

    asyncio.run(serving())
