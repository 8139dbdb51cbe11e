"""OpenAI-compatible LLM client: requests, streaming, retries, backend resolution."""

from hugind.llm.client import SESSION_HEADER, SESSION_MODES, ChatClient, api_base
from hugind.llm.config import TOOL_FORMATS, BackendConfig, default_config_path, hugind_home, resolve_backend
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
from hugind.llm.retry import RetryPolicy, parse_retry_after
from hugind.llm.stream import StreamAccumulator
from hugind.llm.types import ChatResult, NativeToolCall, Usage

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
