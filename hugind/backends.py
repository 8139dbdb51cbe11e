"""Which LLM backend a run talks to, and whether it may.

Trust follows who chose the backend. One the user names (``--backend``,
``HUGIND_BACKEND``, or a name from the user's own config file) is trusted. A
URL written in ``agent.yaml`` was chosen by the agent's author, who may be
hostile: it could point at a metadata service or carry the prompts away. So
such a URL must pass the agent's own network policy, like any fetch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hugind.errors import BackendError, HostIOError, HugindError, LimitExceeded, PermissionDenied, Timeout
from hugind.manifest import Manifest

if TYPE_CHECKING:  # the LLM stack (httpx) is imported only when a run uses it
    from hugind.llm import BackendConfig, ChatClient


def _is_url(spec: Any) -> bool:
    return isinstance(spec, str) and spec.startswith(("http://", "https://"))


def choose_backend(manifest: Manifest, user_choice: str | None, policy: Any) -> BackendConfig:
    """Resolve the run's backend; raises BackendError/ManifestError/PermissionDenied."""
    from hugind.llm import resolve_backend

    if user_choice:
        return resolve_backend(user_choice)
    spec = manifest.backend
    url = spec if _is_url(spec) else (spec.get("url") if isinstance(spec, dict) else None)
    if url:
        policy.check_connect(url)  # the agent's author chose it: it is checked like a fetch
    return resolve_backend(spec)


@dataclass
class LlmService:
    """A lazily connected client shared by the guest's ask_llm calls and the loop."""

    connect: Callable[[], BackendConfig]
    deadline: float | None = None  # the run's, handed to the client
    _client: ChatClient | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def client(self) -> ChatClient:
        with self._lock:
            if self._client is None:
                try:
                    self._client = self.connect().make_client()
                    self._client.deadline = self.deadline
                except PermissionDenied:
                    raise
                except HugindError as err:
                    # The guest sees a host error it can catch; the run goes on.
                    raise PermissionDenied(f"llm: {err.message}") from None
            return self._client

    def ask(self, request: Any, *, stream: bool, on_token: Callable[[str], None] | None) -> str:
        from hugind.agentic.ask import ask_llm

        try:
            return ask_llm(self.client(), request, stream=stream, on_token=on_token)
        except BackendError as err:
            raise HostIOError(f"llm: {err.message}") from None
        except LimitExceeded:
            raise Timeout("llm: the run's deadline passed while waiting for the backend") from None

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None
