"""hugind's API for Python agents: the JS API's capabilities, in Python form.

Every function reaches the host through the same ops, dispatcher and policy
as a JS agent (docs/host-ops.md). Blocking functions return their value;
their ``*_async`` twins return awaitables whose host work runs in parallel
(``asyncio.gather`` of two ``run_command_async`` runs both commands at once).
Output is ordinary ``print`` (stdout) and ``eprint`` (stderr).
"""

import sys as _sys

from hugind import _ops, _state, fs
from hugind._errors import (
    HostError,
    InternalError,
    InvalidArgument,
    LimitExceeded,
    ModuleError,
    NotFound,
    PermissionDenied,
    Stalled,
    Timeout,
    Unsupported,
)
from hugind._errors import IOError_ as HostIOError
from hugind._tools import get_tool_results, register_tool, set_max_turns, set_system_prompt, tool

__all__ = [
    "HostError",
    "HostIOError",
    "InternalError",
    "InvalidArgument",
    "LimitExceeded",
    "ModuleError",
    "NotFound",
    "PermissionDenied",
    "Response",
    "Stalled",
    "Timeout",
    "Unsupported",
    "args",
    "ask_llm",
    "ask_llm_async",
    "ask_llm_stream",
    "ask_llm_stream_async",
    "env",
    "eprint",
    "fetch",
    "fetch_async",
    "fs",
    "get_input",
    "get_tool_results",
    "http_get",
    "http_get_async",
    "http_post",
    "http_post_async",
    "mcp_call_tool",
    "mcp_call_tool_async",
    "mcp_list_tools",
    "meta",
    "register_tool",
    "run_command",
    "run_command_async",
    "set_max_turns",
    "set_result",
    "set_system_prompt",
    "spawn",
    "spawn_async",
    "tool",
    "version",
]


def _future(op, args, on_progress=None, convert=None):
    from hugind._loop import future_of  # asyncio only for agents that use it (~0.4 s to import)

    return future_of(op, args, on_progress, convert)


def eprint(*values, sep=" ", end="\n"):
    print(*values, sep=sep, end=end, file=_sys.stderr)


def get_input():
    """The run's input: {"args": [...], "meta": {"session": ..., "env": {...}}}."""
    return _state.input


def args():
    """The run's arguments (``hugind run agent -- a b``)."""
    return list(_state.args)


def meta():
    return dict(_state.meta)


def env():
    """The environment variables the manifest declared and the host set (only those)."""
    return dict(_state.meta.get("env") or {})


def version():
    return _state.version


def set_result(value):
    """The run's result; wins over main's return value. Must be JSON."""
    _ops.call("agent.set_result", {"value": value})


# ---- shell ---------------------------------------------------------------------


def _shell_text(detailed):
    return (lambda r: r) if detailed else (lambda r: r["stdout"] + r["stderr"])


def run_command(command, detailed=False):
    """Run a shell command (policy: shell); its stdout + stderr, or the detailed dict
    {stdout, stderr, exit_code, timed_out, truncated}."""
    return _shell_text(detailed)(_ops.wait("shell.run", {"command": str(command)}))


def run_command_async(command, detailed=False):
    return _future("shell.run", {"command": str(command)}, convert=_shell_text(detailed))


def _spawn_args(program, argv):
    return {"program": str(program), "args": [str(a) for a in (argv or [])]}


def spawn(program, argv=(), detailed=False):
    """Run ``program`` with ``argv`` (no shell)."""
    return _shell_text(detailed)(_ops.wait("shell.spawn", _spawn_args(program, argv)))


def spawn_async(program, argv=(), detailed=False):
    return _future("shell.spawn", _spawn_args(program, argv), convert=_shell_text(detailed))


# ---- network ---------------------------------------------------------------------


class Response:
    """A fetched response: status, headers, the body as text and as bytes, the final url."""

    def __init__(self, reply):
        self.status = reply.get("status")
        self.headers = reply.get("headers") or {}
        self.text = reply.get("body") or ""
        self.url = reply.get("url")
        self._base64 = reply.get("body_base64")

    @property
    def content(self):
        """The body's bytes as the server sent them (``text`` replaces what is not UTF-8)."""
        if isinstance(self._base64, str):
            import binascii

            return binascii.a2b_base64(self._base64)
        return self.text.encode("utf-8")

    @property
    def ok(self):
        return isinstance(self.status, int) and 200 <= self.status < 300

    def json(self):
        from hugind._wire import loads

        return loads(self.text)

    def __repr__(self):
        return f"<Response {self.status} {self.url}>"


def _fetch_args(url, method="GET", headers=None, body=None, follow_redirects=True):
    args = {"url": str(url), "method": str(method).upper(), "headers": dict(headers or {})}
    if not follow_redirects:  # the 3xx itself is the Response
        args["redirect"] = "manual"
    if isinstance(body, (bytes, bytearray, memoryview)):
        data = bytes(body)
        try:
            args["body"] = data.decode("utf-8")
        except UnicodeDecodeError:  # sent as base64 so the server gets these bytes exactly
            import binascii

            args["body_base64"] = binascii.b2a_base64(data, newline=False).decode("ascii")
    elif body is not None:
        if not isinstance(body, str):
            from hugind._wire import dumps

            body = dumps(body)
        args["body"] = body
    return args


def fetch(url, method="GET", headers=None, body=None, follow_redirects=True):
    """An HTTP request (policy: network); a Response. Blocks until the answer is in."""
    return Response(_ops.call("net.fetch", _fetch_args(url, method, headers, body, follow_redirects)))


def fetch_async(url, method="GET", headers=None, body=None, follow_redirects=True):
    return _future("net.fetch", _fetch_args(url, method, headers, body, follow_redirects), convert=Response)


def http_get(url, headers=None):
    """GET ``url``; the body as text."""
    return _ops.call("net.fetch", _fetch_args(url, "GET", headers))["body"]


def http_post(url, body, headers=None):
    return _ops.call("net.fetch", _fetch_args(url, "POST", headers, body))["body"]


def http_get_async(url, headers=None):
    return _future("net.fetch", _fetch_args(url, "GET", headers), convert=lambda r: r["body"])


def http_post_async(url, body, headers=None):
    return _future("net.fetch", _fetch_args(url, "POST", headers, body), convert=lambda r: r["body"])


# ---- LLM ---------------------------------------------------------------------------


def _llm_args(request):
    if isinstance(request, str):
        return {"prompt": request}
    body = {k: v for k, v in dict(request).items() if k != "on_token"}
    return {"request": body}


def ask_llm(request):
    """Ask the run's LLM backend (policy: the backend the user chose); the answer's text."""
    return _ops.call("llm.ask", _llm_args(request))


def ask_llm_async(request):
    return _future("llm.ask", _llm_args(request))


def ask_llm_stream(request, on_token=None):
    """As ask_llm; ``on_token`` sees every delta in order once the answer is complete."""
    value, events = _ops.call_with_events("llm.ask_stream", _llm_args(request))
    if on_token is not None:
        for token in events:
            on_token(token)
    return value


def ask_llm_stream_async(request, on_token=None):
    """As ask_llm_async; ``on_token`` is called as the tokens arrive."""
    return _future("llm.ask_stream", _llm_args(request), on_progress=on_token)


# ---- MCP -----------------------------------------------------------------------------


def mcp_list_tools():
    return _ops.call("mcp.list_tools")


def mcp_call_tool(name, arguments=None):
    return _ops.call("mcp.call_tool", {"name": str(name), "arguments": dict(arguments or {})})


def mcp_call_tool_async(name, arguments=None):
    return _future("mcp.call_tool", {"name": str(name), "arguments": dict(arguments or {})})
