"""Backend error taxonomy and the classification of failed responses.

Every error names the backend URL and, for HTTP failures, the status code, so
the CLI can print one clear line. ``retryable`` tells the client whether a
retry may help; ``retry_after`` carries the server's ``Retry-After`` hint.
API keys never appear in messages: only the server's own error text does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from hugind import jsontext
from hugind.errors import BackendError, ExitCode

_MAX_DETAIL = 400


class BackendConfigError(BackendError):
    """The backend spec or the user's config file is wrong (a usage error)."""

    exit_code = ExitCode.USAGE


class BackendCallError(BackendError):
    """A chat request failed. Subclasses say why."""

    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        url: str = "",
        status: int | None = None,
        detail: str = "",
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.url = url
        self.status = status
        self.detail = detail
        self.retry_after = retry_after
        self.attempts = 1

    def note_attempts(self, attempts: int) -> None:
        """Record how many attempts were made; mention it in the message."""
        self.attempts = attempts
        if attempts > 1 and "attempts)" not in self.message:
            self.message = f"{self.message} (gave up after {attempts} attempts)"
            self.args = (self.message,)


class BackendAuthError(BackendCallError):
    """401/403: missing or rejected credentials."""


class BackendNotFoundError(BackendCallError):
    """404 or 'model not found': wrong URL path or model not served."""


class ContextOverflowError(BackendCallError):
    """The conversation no longer fits the model's context window."""


class RateLimitError(BackendCallError):
    retryable = True


class TransientBackendError(BackendCallError):
    """5xx, 503 loading/busy, a dropped connection: worth retrying."""

    retryable = True


class PermanentBackendError(BackendCallError):
    """Any other rejection (400 bad request, 422, quota exhausted ...)."""


class BackendUnreachableError(BackendCallError):
    """Nothing answered: connection refused, DNS failure, connect timeout."""

    retryable = True


class BackendTimeoutError(BackendCallError):
    """The backend accepted the request but did not answer in time."""


class BackendProtocolError(BackendCallError):
    """The backend answered with something that is not a chat completion."""


# Patterns, not compiled ones: only a failed request reads them, and re compiles
# (and caches) each on its first search instead of every run paying at import.
_OVERFLOW = (
    r"(?i)exceed_context_size|context[_ ]length|context window|maximum context|context size|"
    r"too many tokens|prompt is too long|input is too long|reduce the length|"
    r"exceeds? the (?:available )?context|n_ctx|tokens? exceeds?"
)
_MODEL_MISSING = r"(?is)model\b.*\b(?:not found|does not exist|not available|unknown)"
_QUOTA = r"(?i)insufficient_quota|quota exceeded|billing"


def error_detail(body: Any) -> tuple[str, str]:
    """(message, type) out of an error body in any of the common shapes."""
    if isinstance(body, (bytes, bytearray)):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str):
        text = body.strip()
        try:
            body = jsontext.loads(text) if text[:1] in "{[" else text
        except ValueError:
            body = text
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, str):
            return _clip(inner), str(body.get("type") or "")
        if isinstance(inner, Mapping):
            message = inner.get("message") or inner.get("detail") or inner.get("msg") or ""
            if not message and inner is not body:
                message = json.dumps(inner)[:_MAX_DETAIL]
            kind = inner.get("type") or inner.get("code") or ""
            return _clip(str(message)), str(kind)
        if "detail" in body:
            return _clip(str(body["detail"])), ""
    if body is None:
        return "", ""
    return _clip(str(body)), ""


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 3] + "..."


def classify_http_error(
    url: str,
    status: int,
    body: Any,
    *,
    model: str = "",
    retry_after: float | None = None,
) -> BackendCallError:
    """Turn a non-2xx answer (or an in-stream error object) into an error."""
    detail, kind = error_detail(body)
    said = f": {detail}" if detail else ""
    where = f"backend {url}"
    text = f"{detail} {kind}"
    if status in (401, 403):
        return BackendAuthError(
            f"{where} rejected the request (HTTP {status}, authentication){said}; "
            "check the API key (api_key_env) and headers of this backend",
            url=url,
            status=status,
            detail=detail,
        )
    if re.search(_OVERFLOW, text) and status in (400, 413, 422, 500):
        return ContextOverflowError(
            f"{where}: the conversation exceeds the model's context window (HTTP {status}){said}",
            url=url,
            status=status,
            detail=detail,
        )
    if status == 404 or (status in (400, 422) and re.search(_MODEL_MISSING, detail)):
        if model and (re.search(_MODEL_MISSING, detail) or "model" in detail.lower()):
            msg = f"{where}: model '{model}' is not available (HTTP {status}){said}"
        else:
            msg = f"{where}: not found (HTTP {status}){said}; is this the URL of an OpenAI-compatible server (…/v1)?"
        return BackendNotFoundError(msg, url=url, status=status, detail=detail)
    if status == 429:
        if re.search(_QUOTA, text):
            return PermanentBackendError(
                f"{where}: quota exhausted (HTTP 429){said}", url=url, status=status, detail=detail
            )
        return RateLimitError(
            f"{where}: rate limited (HTTP 429){said}",
            url=url,
            status=status,
            detail=detail,
            retry_after=retry_after,
        )
    if status in (408, 425) or status >= 500:
        label = "busy or loading" if status == 503 else "server error"
        return TransientBackendError(
            f"{where}: {label} (HTTP {status}){said}",
            url=url,
            status=status,
            detail=detail,
            retry_after=retry_after,
        )
    return PermanentBackendError(
        f"{where} rejected the request (HTTP {status}){said}", url=url, status=status, detail=detail
    )


def classify_stream_error(url: str, payload: Any, *, model: str = "") -> BackendCallError:
    """An ``{"error": ...}`` object that arrived inside an SSE stream."""
    inner = payload.get("error", payload) if isinstance(payload, Mapping) else payload
    status = 500
    if isinstance(inner, Mapping):
        for key in ("code", "status", "status_code"):
            value = inner.get(key)
            if isinstance(value, int) and 400 <= value <= 599:
                status = value
                break
    err = classify_http_error(url, status, payload, model=model)
    err.message = err.message.replace(f"(HTTP {status}", f"(error in stream, HTTP {status}", 1)
    err.args = (err.message,)
    return err
