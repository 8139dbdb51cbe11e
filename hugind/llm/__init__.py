"""OpenAI-compatible LLM client: requests, streaming, retries, backend resolution.

Names are loaded from their module on first use: every run resolves its backend
(``hugind.llm.config``), and that must not load the client and its HTTP stack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_HOME = {
    "endpoint": ("SESSION_HEADER", "SESSION_MODES", "api_base"),
    "client": ("ChatClient",),
    "fallback": ("FallbackClient",),
    "config": ("TOOL_FORMATS", "BackendConfig", "default_config_path", "hugind_home", "resolve_backend"),
    "errors": (
        "BackendAuthError",
        "BackendCallError",
        "BackendConfigError",
        "BackendNotFoundError",
        "BackendProtocolError",
        "BackendTimeoutError",
        "BackendUnreachableError",
        "ContextOverflowError",
        "PermanentBackendError",
        "RateLimitError",
        "TransientBackendError",
        "classify_http_error",
    ),
    "retry": ("RetryPolicy", "parse_retry_after"),
    "stream": ("StreamAccumulator",),
    "types": ("ChatResult", "NativeToolCall", "Usage"),
}
_MODULE_OF = {name: module for module, names in _HOME.items() for name in names}

__all__ = [
    "SESSION_HEADER",
    "SESSION_MODES",
    "TOOL_FORMATS",
    "BackendAuthError",
    "BackendCallError",
    "BackendConfig",
    "BackendConfigError",
    "BackendNotFoundError",
    "BackendProtocolError",
    "BackendTimeoutError",
    "BackendUnreachableError",
    "ChatClient",
    "ChatResult",
    "ContextOverflowError",
    "FallbackClient",
    "NativeToolCall",
    "PermanentBackendError",
    "RateLimitError",
    "RetryPolicy",
    "StreamAccumulator",
    "TransientBackendError",
    "Usage",
    "api_base",
    "classify_http_error",
    "default_config_path",
    "hugind_home",
    "parse_retry_after",
    "resolve_backend",
]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # once loaded, a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:
    from hugind.llm.client import ChatClient
    from hugind.llm.config import TOOL_FORMATS, BackendConfig, default_config_path, hugind_home, resolve_backend
    from hugind.llm.endpoint import SESSION_HEADER, SESSION_MODES, api_base
    from hugind.llm.errors import (
        BackendAuthError,
        BackendCallError,
        BackendConfigError,
        BackendNotFoundError,
        BackendProtocolError,
        BackendTimeoutError,
        BackendUnreachableError,
        ContextOverflowError,
        PermanentBackendError,
        RateLimitError,
        TransientBackendError,
        classify_http_error,
    )
    from hugind.llm.fallback import FallbackClient
    from hugind.llm.retry import RetryPolicy, parse_retry_after
    from hugind.llm.stream import StreamAccumulator
    from hugind.llm.types import ChatResult, NativeToolCall, Usage
