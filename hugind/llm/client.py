"""OpenAI-compatible chat-completions client over httpx.

httpx is imported where a request is built or handled, not at module level:
resolving a backend (which every run does) must not pay its ~0.1 s import.

One ``ChatClient`` per backend. ``complete`` sends one chat request (streamed
or not), retries what is worth retrying, and returns a :class:`ChatResult` or
raises a :class:`~hugind.llm.errors.BackendCallError` subclass.
"""

from __future__ import annotations

import functools
import random
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hugind import jsontext
from hugind.errors import BackendError, LimitExceeded
from hugind.llm.endpoint import SESSION_HEADER, SESSION_MODES, Pin, api_base
from hugind.llm.errors import (
    BackendCallError,
    BackendConfigError,
    BackendNotFoundError,
    BackendProtocolError,
    BackendTimeoutError,
    BackendUnreachableError,
    TransientBackendError,
    classify_http_error,
    classify_stream_error,
)
from hugind.llm.retry import RetryPolicy, parse_retry_after
from hugind.llm.sampling import SamplingRules
from hugind.llm.sse import iter_sse
from hugind.llm.stream import StreamAccumulator, StreamErrorPayload, TokenCallback
from hugind.llm.types import ChatResult, NativeToolCall, Usage, arguments_text, content_text

if TYPE_CHECKING:
    import ssl

    import httpx


class ChatClient:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 120.0,
        max_retries: int = 3,
        session_mode: str = "fresh",
        session_id: str | None = None,
        *,
        retry: RetryPolicy | None = None,
        connect_timeout: float = 10.0,
        stream_usage: bool = True,
        sampling: SamplingRules | None = None,
        pin: Pin | None = None,
    ) -> None:
        if session_mode not in SESSION_MODES:
            raise BackendConfigError(f"session_mode must be one of {', '.join(SESSION_MODES)}")
        if session_mode == "resume" and not session_id:
            raise BackendConfigError("session_mode 'resume' needs a session_id")
        if timeout <= 0:
            raise BackendConfigError("timeout must be positive")
        self.base_url = api_base(base_url)
        self.model = model or ""
        self.session_mode = session_mode
        self.session_id: str | None = None
        if session_mode == "fresh":
            self.session_id = session_id or uuid.uuid4().hex
        elif session_mode == "resume":
            self.session_id = session_id
        self.retry = retry or RetryPolicy(max_retries=max_retries)
        self.stream_usage = stream_usage
        self.sampling = sampling  # the user's bounds and the agent's defaults, applied to every request
        self._rng = random.Random()
        base_headers = {"Accept": "application/json"}
        base_headers.update(dict(headers or {}))
        if api_key:
            base_headers["Authorization"] = f"Bearer {api_key}"
        if self.session_id:
            base_headers[SESSION_HEADER] = self.session_id
        # A run's wall-clock deadline (time.monotonic()), set by whoever runs the
        # agent: no request or retry wait outlives it.
        self.deadline: float | None = None
        self._timeout = timeout
        import httpx

        transport = None
        if pin is not None:  # an agent's URL: connect only to what its network policy checked
            from hugind.llm.pinned import pinned_transport

            transport = pinned_transport(pin, _tls_context())
        self.pin = pin
        self._http = httpx.Client(
            transport=transport,
            verify=_tls_context(),
            headers=base_headers,
            timeout=httpx.Timeout(timeout, connect=min(connect_timeout, timeout)),
            follow_redirects=False,
            trust_env=False,
        )

    # -- lifecycle ----------------------------------------------------------

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ChatClient({self.base_url!r}, model={self.model!r}, session={self.session_mode})"

    @property
    def chat_url(self) -> str:
        return f"{self.base_url}/chat/completions"

    # -- requests -----------------------------------------------------------

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        stream: bool = False,
        on_token: TokenCallback | None = None,
        response_format: Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
        on_reasoning: TokenCallback | None = None,
    ) -> ChatResult:
        body: dict[str, Any] = {"messages": list(messages), "stream": bool(stream)}
        if self.model:
            body["model"] = self.model
        if tools:
            body["tools"] = list(tools)
        if response_format is not None:
            body["response_format"] = dict(response_format)
        if stream and self.stream_usage:
            body["stream_options"] = {"include_usage": True}
        if extra:
            body.update(extra)
        if self.sampling:
            self.sampling.apply(body)
        stream = bool(body.get("stream"))
        started = time.monotonic()
        waited = 0.0
        attempt = 0
        while True:
            attempt += 1
            self._check_deadline()
            acc = StreamAccumulator(on_token, on_reasoning)
            try:
                result = self._stream_once(body, acc) if stream else self._post_once(body)
            except BackendCallError as err:
                self._check_deadline()  # a request cut short by the run's deadline is the run's limit
                retry_ok = err.retryable or (isinstance(err, BackendTimeoutError) and self.retry.retry_timeouts)
                # Never replay a stream whose tokens the caller has already seen.
                replay_safe = acc.tokens_emitted == 0 or on_token is None
                if not retry_ok or not replay_safe or attempt > self.retry.max_retries:
                    err.note_attempts(attempt)
                    raise
                delay = self.retry.delay(attempt, err.retry_after, self._rng)
                if waited + delay > self.retry.max_total_wait or delay >= self._left():
                    err.note_attempts(attempt)
                    raise
                time.sleep(delay)
                waited += delay
                continue
            result.attempts = attempt
            result.elapsed_s = time.monotonic() - started
            return result

    def list_models(self, timeout: float = 5.0) -> list[str]:
        """Model ids from ``GET {base}/models`` (empty on any failure)."""
        import httpx

        try:
            resp = self._http.get(f"{self.base_url}/models", timeout=timeout)
            data = jsontext.loads(resp.content) if resp.status_code == 200 else {}
        except (httpx.HTTPError, ValueError):
            return []
        items = (data.get("data") or data.get("models") or []) if isinstance(data, Mapping) else []
        names = []
        for item in items if isinstance(items, list) else []:
            if isinstance(item, Mapping):
                name = item.get("id") or item.get("name") or item.get("model")
                if isinstance(name, str):
                    names.append(name)
        return names

    # -- one attempt --------------------------------------------------------

    def _left(self) -> float:
        return float("inf") if self.deadline is None else self.deadline - time.monotonic()

    def _check_deadline(self) -> None:
        if self._left() <= 0:
            raise LimitExceeded(
                "run stopped: wall-clock deadline exceeded while waiting for the LLM backend "
                "(permissions.limits.timeout)"
            )

    def _request_timeout(self) -> Any:  # an httpx.Timeout, or httpx's client-default marker
        import httpx

        left = self._left()
        if left >= self._timeout:
            return httpx.USE_CLIENT_DEFAULT
        return httpx.Timeout(max(left, 0.001))

    def _post_once(self, body: Mapping[str, Any]) -> ChatResult:
        import httpx

        try:
            resp = self._http.post(self.chat_url, json=body, timeout=self._request_timeout())
        except httpx.HTTPError as exc:
            raise self._transport_error(exc) from None
        if resp.status_code >= 400:
            raise self._http_error(resp.status_code, resp.text, resp.headers)
        try:
            data = jsontext.loads(resp.content)
        except ValueError:
            raise BackendProtocolError(
                f"backend {self.base_url} answered HTTP {resp.status_code} with a body that is not JSON",
                url=self.base_url,
                status=resp.status_code,
            ) from None
        return self._parse_completion(data, resp.status_code)

    def _stream_once(self, body: Mapping[str, Any], acc: StreamAccumulator) -> ChatResult:
        import httpx

        try:
            with self._http.stream("POST", self.chat_url, json=body, timeout=self._request_timeout()) as resp:
                if resp.status_code >= 400:
                    resp.read()
                    raise self._http_error(resp.status_code, resp.text, resp.headers)
                ctype = resp.headers.get("content-type", "")
                if "text/event-stream" not in ctype and "ndjson" not in ctype:
                    # The server ignored "stream": true and sent one JSON document.
                    resp.read()
                    try:
                        return self._parse_completion(jsontext.loads(resp.text), resp.status_code)
                    except ValueError:
                        pass
                    raise BackendProtocolError(
                        f"backend {self.base_url} sent neither an event stream nor JSON "
                        f"(content-type {ctype or 'missing'})",
                        url=self.base_url,
                        status=resp.status_code,
                    )
                done = self._consume(resp, acc)
        except httpx.HTTPError as exc:
            raise self._transport_error(exc) from None
        if not done and acc.finish_reason is None:
            raise TransientBackendError(
                f"backend {self.base_url}: the stream ended before completion ({acc.chunks} chunks, no [DONE])",
                url=self.base_url,
            )
        return acc.result()

    def _consume(self, resp: httpx.Response, acc: StreamAccumulator) -> bool:
        for event in iter_sse(resp.iter_lines()):
            data = event.data.strip()
            if data == "[DONE]":
                return True
            if not data:
                continue
            try:
                chunk = jsontext.loads(data)
            except ValueError:
                raise BackendProtocolError(
                    f"backend {self.base_url} sent a stream record that is not JSON: {data[:120]!r}",
                    url=self.base_url,
                    status=resp.status_code,
                ) from None
            if event.event == "error" and isinstance(chunk, Mapping) and "error" not in chunk:
                chunk = {"error": chunk}
            try:
                acc.feed(chunk)
            except StreamErrorPayload as bad:
                raise classify_stream_error(self.base_url, bad.payload, model=self.model) from None
        return False

    # -- parsing and errors ------------------------------------------------

    def _parse_completion(self, data: Any, status: int) -> ChatResult:
        if isinstance(data, Mapping) and data.get("error") is not None:
            raise classify_stream_error(self.base_url, data, model=self.model)
        choices = data.get("choices") if isinstance(data, Mapping) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            raise BackendProtocolError(
                f"backend {self.base_url} answered HTTP {status} without choices: not a chat completion",
                url=self.base_url,
                status=status,
            )
        choice = choices[0]
        message = choice.get("message") if isinstance(choice.get("message"), Mapping) else {}
        reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
        calls = []
        for raw in message.get("tool_calls") or []:
            if not isinstance(raw, Mapping):
                continue
            fn = raw.get("function") if isinstance(raw.get("function"), Mapping) else {}
            calls.append(
                NativeToolCall(
                    id=raw.get("id") if isinstance(raw.get("id"), str) else "",
                    name=fn.get("name") if isinstance(fn.get("name"), str) else "",
                    arguments_json=arguments_text(fn.get("arguments")),
                )
            )
        return ChatResult(
            content=content_text(message.get("content")),
            reasoning=reasoning if isinstance(reasoning, str) else "",
            tool_calls=calls,
            finish_reason=choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None,
            usage=Usage.from_dict(data.get("usage")),
            model=data.get("model") if isinstance(data.get("model"), str) else "",
        )

    def _http_error(self, status: int, text: str, headers: Mapping[str, str]) -> BackendCallError:
        err = classify_http_error(self.base_url, status, text, model=self.model, retry_after=parse_retry_after(headers))
        if isinstance(err, BackendNotFoundError) and self.model:
            known = self.list_models(timeout=2.0)
            if known and self.model not in known:
                err.message = f"{err.message}; models served there: {', '.join(known[:20])}"
                err.args = (err.message,)
        return err

    def _transport_error(self, exc: httpx.HTTPError) -> BackendError:
        import httpx

        url = self.base_url
        if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
            reason = "connection timed out" if isinstance(exc, httpx.ConnectTimeout) else _reason(exc)
            return BackendUnreachableError(f"backend {url} is unreachable ({reason}); is the server running?", url=url)
        if isinstance(exc, httpx.TimeoutException):
            return BackendTimeoutError(f"backend {url} did not answer in time ({type(exc).__name__})", url=url)
        if isinstance(exc, (httpx.UnsupportedProtocol, httpx.InvalidURL)):
            return BackendConfigError(f"backend URL {url} is invalid: {exc}")
        return TransientBackendError(f"backend {url}: connection failed mid-request ({_reason(exc)})", url=url)


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """httpx's default verifying TLS context, built once (loading the CA bundle takes ~50 ms)."""
    import httpx

    return httpx.create_ssl_context()


def _reason(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) < 160 else text[:157] + "..."
