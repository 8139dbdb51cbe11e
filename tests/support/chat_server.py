"""A real OpenAI-compatible chat server on 127.0.0.1 for tests and benchmarks.

    with ChatServer([Reply("hello")]) as server:
        client = ChatClient(server.url, "test-model")
        ...
        server.chat_requests[0].body["messages"]

Each chat request pops the next scripted step:

* :class:`Reply` - an assistant message. Answered as one JSON document, or as
  SSE chunks when the request says ``"stream": true`` (fragmentation set by
  ``style``: ``"vllm"``, ``"llamacpp"``, ``"ollama"``, ``"ollama_batched"``);
* :class:`Stream` - raw SSE records, sent as given (errors mid-stream, junk);
* :class:`HttpError` - a status, JSON body and optional ``Retry-After``;
* :class:`Drop` - the connection is closed without an answer;
* a callable ``f(request) -> step`` - decides from the request.

Every step may wait ``delay`` seconds first. Every request is recorded with
its headers, JSON body and the server-side handling time.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Union

from tests.support.http_server import QuietServer

DEFAULT_USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def tool_call(name: str, args: Any = None, id: str | None = None) -> dict[str, Any]:
    """A native tool call; ``args`` may be a dict or a raw (possibly broken) JSON string."""
    arguments = args if isinstance(args, str) else json.dumps(args or {})
    return {
        "id": id or f"call_{uuid.uuid4().hex[:8]}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


@dataclass
class Reply:
    content: str | None = ""
    reasoning: str | None = None
    reasoning_key: str = "reasoning_content"
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict[str, Any] | None = field(default_factory=lambda: dict(DEFAULT_USAGE))
    delay: float = 0.0
    style: str = "vllm"
    content_chunk: int = 4
    args_chunk: int = 5
    reasoning_chunk: int = 6
    chunk_delay: float = 0.0

    def finish(self) -> str:
        return self.finish_reason or ("tool_calls" if self.tool_calls else "stop")


@dataclass
class Stream:
    records: list[Any]  # dicts become `data: {json}`; strings are sent as `data: <str>`
    delay: float = 0.0
    drop: bool = False  # close the connection after the records instead of ending cleanly
    chunk_delay: float = 0.0


@dataclass
class HttpError:
    status: int
    body: Any = None
    retry_after: str | float | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Drop:
    delay: float = 0.0


Step = Union[Reply, Stream, HttpError, Drop, Callable[["RecordedRequest"], Any]]


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    started: float
    finished: float = 0.0

    @property
    def handling_s(self) -> float:
        """Server-side time to answer (0 while the answer is still being written)."""
        return max(0.0, self.finished - self.started) if self.finished else 0.0

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", []) if isinstance(self.body, dict) else []


class ChatServer:
    def __init__(self, steps: Iterable[Step] = (), *, model: str = "test-model", default: Step | None = None):
        self.model = model
        self.default = default
        self._steps: deque[Step] = deque(steps)
        self._lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------

    def start(self) -> ChatServer:
        handler = type("Handler", (_Handler,), {"chat": self})
        self._httpd = QuietServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01})
        self._thread.daemon = True
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base}/v1"

    # -- script and records -------------------------------------------------

    def push(self, *steps: Step) -> None:
        with self._lock:
            self._steps.extend(steps)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._steps)

    def _next(self) -> Step | None:
        with self._lock:
            if self._steps:
                return self._steps.popleft()
        return self.default

    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(req)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def backend_seconds(self) -> float:
        return sum(r.handling_s for r in self.chat_requests)


def free_port() -> int:
    """A loopback port nobody listens on (for 'backend down' tests)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    chat: ChatServer
    timeout = 30

    def setup(self) -> None:
        super().setup()
        # Small SSE writes must leave at once (no Nagle delay), as real servers do.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        started = time.monotonic()
        req = RecordedRequest("GET", self.path, _headers(self), None, started)
        self.chat._record(req)
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._json(200, {"object": "list", "data": [{"id": self.chat.model, "object": "model"}]})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
        req.finished = time.monotonic()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        started = time.monotonic()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        req = RecordedRequest("POST", self.path, _headers(self), body, started)
        self.chat._record(req)  # recorded before answering: the client may look right after
        try:
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            elif not isinstance(body, dict):
                self._json(400, {"error": {"message": "body must be a JSON object", "type": "invalid_request"}})
            else:
                self._serve(req, body)
        finally:
            req.finished = time.monotonic()

    # -- step execution -----------------------------------------------------

    def _serve(self, req: RecordedRequest, body: dict[str, Any]) -> None:
        step = self.chat._next()
        while callable(step) and not isinstance(step, (Reply, Stream, HttpError, Drop)):
            step = step(req)
        if step is None:
            self._json(500, {"error": {"message": "chat_server: script exhausted", "type": "server_error"}})
            return
        if step.delay:
            time.sleep(step.delay)
        if isinstance(step, Drop):
            self._drop()
        elif isinstance(step, HttpError):
            headers = dict(step.headers)
            if step.retry_after is not None:
                headers["Retry-After"] = str(step.retry_after)
            self._json(step.status, step.body if step.body is not None else {}, headers)
        elif isinstance(step, Stream):
            self._sse(step.records, step.chunk_delay, drop=step.drop)
        elif body.get("stream"):
            usage_wanted = bool((body.get("stream_options") or {}).get("include_usage"))
            self._sse([*_chunks(step, self.chat.model, usage_wanted), "[DONE]"], step.chunk_delay)
        else:
            self._json(200, _completion(step, self.chat.model))

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, records: list[Any], chunk_delay: float, drop: bool = False) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for record in records:
            text = record if isinstance(record, str) else json.dumps(record)
            self._chunk(f"data: {text}\n\n".encode())
            if chunk_delay:
                time.sleep(chunk_delay)
        if drop:
            self._drop()
            return
        self.wfile.write(b"0\r\n\r\n")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    def _drop(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


def _headers(handler: BaseHTTPRequestHandler) -> dict[str, str]:
    return {k.lower(): v for k, v in handler.headers.items()}


def _completion(step: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": step.content}
    if step.reasoning is not None:
        message[step.reasoning_key] = step.reasoning
    if step.tool_calls:
        message["tool_calls"] = step.tool_calls
    payload: dict[str, Any] = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:10]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": step.finish()}],
    }
    if step.usage is not None:
        payload["usage"] = step.usage
    return payload


def _pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _chunks(step: Reply, model: str, usage_wanted: bool) -> Iterator[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-stream",
            "object": "chat.completion.chunk",
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    yield chunk({"role": "assistant", "content": ""})
    if step.reasoning:
        for piece in _pieces(step.reasoning, step.reasoning_chunk):
            yield chunk({step.reasoning_key: piece})
    if step.content:
        for piece in _pieces(step.content, step.content_chunk):
            yield chunk({"content": piece})
    yield from _tool_chunks(step, chunk)
    yield chunk({}, step.finish())
    if usage_wanted and step.usage is not None:
        yield {
            "id": "chatcmpl-stream",
            "object": "chat.completion.chunk",
            "model": model,
            "choices": [],
            "usage": step.usage,
        }


def _tool_chunks(step: Reply, chunk: Callable[..., dict[str, Any]]) -> Iterator[dict[str, Any]]:
    if step.style == "ollama_batched" and step.tool_calls:
        yield chunk({"tool_calls": [dict(c, index=i) for i, c in enumerate(step.tool_calls)]})
        return
    for index, call in enumerate(step.tool_calls):
        fn = call["function"]
        if step.style == "ollama":
            # Ollama sends each whole call in its own chunk, each at index 0.
            yield chunk({"tool_calls": [dict(call, index=0)]})
            continue
        frags = _pieces(fn["arguments"], step.args_chunk)
        first_args = frags.pop(0) if step.style == "llamacpp" else ""
        head = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": fn["name"], "arguments": first_args},
        }
        yield chunk({"tool_calls": [head]})
        for frag in frags:
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": frag}}]})
