"""Which LLM backend a run talks to, and whether it may.

Trust follows who chose the backend. One the user names (``--backend``,
``HUGIND_BACKEND``, or a name from the user's own config file) is trusted. A
URL written in ``agent.yaml`` was chosen by the agent's author, who may be
hostile: it could point at a metadata service or carry the prompts away. So
such a URL must pass the agent's own network policy, like any fetch.
"""

from __future__ import annotations

import ipaddress
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from hugind.errors import BackendError, HostIOError, HugindError, LimitExceeded, PermissionDenied, Timeout
from hugind.manifest import Manifest

if TYPE_CHECKING:  # the LLM stack (httpx) is imported only when a run uses it
    from hugind.llm import BackendConfig, ChatClient
    from hugind.llm.fallback import FallbackClient


def _random_id() -> str:
    """What ``uuid.uuid4().hex`` returns (16 random bytes with the version-4 and RFC 4122
    variant bits set), without importing uuid, its C module and platform on every run."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return raw.hex()


def _is_url(spec: Any) -> bool:
    return isinstance(spec, str) and spec.startswith(("http://", "https://"))


def choose_backend(
    manifest: Manifest,
    user_choice: str | None,
    policy: Any,
    resolved: BackendConfig | None = None,
    model: str | None = None,
) -> BackendConfig:
    """Resolve the run's backend (or take ``resolved``, from ``preview_backend``) and
    check it; raises BackendError/ManifestError/PermissionDenied. ``model`` (the user's
    ``--model``) overrides the backend's: only the request body changes, never the URL."""
    from hugind.llm import resolve_backend

    if user_choice:
        return (resolved or resolve_backend(user_choice, model=model)).for_agent(manifest.sampling)
    spec = manifest.backend
    url = spec if _is_url(spec) else (spec.get("url") if isinstance(spec, dict) else None)
    if url:
        try:
            target = policy.check_connect(url)  # the agent's author chose it: it is checked like a fetch
        except PermissionDenied as err:
            raise _backend_denied(err, url) from None
        # ... and connected to as a fetch is: only at the addresses just checked (no rebinding).
        return (
            (resolved or resolve_backend(spec, model=model))
            .with_overrides(pin=_pin(target))
            .for_agent(manifest.sampling)
        )
    return (resolved or resolve_backend(spec, model=model)).for_agent(manifest.sampling)


def _pin(target: Any) -> Any:
    from hugind.llm.endpoint import Pin

    return Pin.of(target)


def _backend_denied(err: PermissionDenied, url: str) -> PermissionDenied:
    """The policy's refusal, plus the two ways out a newcomer needs."""
    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return err
    host = parts.hostname or "HOST"
    # A private address passes only when allowed_ips names it (with its port): see POLICY.md.
    if _is_ip(host):
        allow = f'allowed_ips: ["{f"[{host}]" if ":" in host else host}:{port}"]'
    else:
        allow = f'allowed_domains: ["{host}:{port}"]'
    hint = (
        f"{err.message}. A backend written in agent.yaml must pass the agent's own network policy: "
        f"allow it under permissions.network (allow: true, {allow}), "
        f"or pass it with --backend {url} (a backend you choose is trusted)"
    )
    out = PermissionDenied(hint)
    out.recorded = err.recorded  # already audited and counted by the policy engine
    return out


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def preview_backend(manifest: Manifest, user_choice: str | None, model: str | None = None) -> BackendConfig | None:
    """The run's backend as configured, without any connection or policy check, with
    its session id fixed now, so ``input.meta.session`` names the id the client
    sends as X-Session-ID. None when no backend resolves (the run may not need one)."""
    from hugind.llm import resolve_backend

    try:
        config = resolve_backend(user_choice or manifest.backend, model=model)
    except HugindError:
        return None
    if config.session_mode == "fresh" and not config.session_id:
        config = config.with_overrides(session_id=_random_id())
    return config


def session_meta(config: BackendConfig | None) -> dict[str, Any]:
    """``input.meta.session``: which backend and session; never a key or header.

    ``id`` is always a string, so agents can key state on it: the id sent as
    X-Session-ID (fresh, resume), or one for this run alone (stateless, no backend).
    """
    if config is None:
        return {"id": _random_id(), "backend": None, "base_url": None, "model": None, "mode": None}
    parts = urlsplit(config.url)
    netloc = parts.hostname or ""
    if ":" in netloc:
        netloc = f"[{netloc}]"
    try:
        if parts.port:
            netloc += f":{parts.port}"
    except ValueError:
        pass
    return {
        "id": config.session_id or _random_id(),
        "backend": config.name,
        "base_url": urlunsplit((parts.scheme, netloc, parts.path, "", "")),  # no user:password or query
        "model": config.model,
        "mode": config.session_mode,
    }


@dataclass
class LlmService:
    """A lazily connected client shared by the guest's ask_llm calls and the loop."""

    connect: Callable[[], BackendConfig]
    deadline: float | None = None  # the run's, handed to the client
    session: dict[str, Any] | None = None  # what the guest sees as input.meta.session
    policy: Any = None  # the agent's: admits fallback URLs written in agent.yaml
    events: Any = None  # an EventSink: backend switches go into the run's NDJSON events
    trace: Any = None  # as RunOptions.trace
    failure: HugindError | None = None  # why connecting failed (the guest saw it as a PermissionDenied)
    config: BackendConfig | None = None  # the backend connected to (its tool_format is the loop's)
    _client: ChatClient | FallbackClient | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def client(self) -> ChatClient | FallbackClient:
        with self._lock:
            if self._client is None:
                try:
                    self.config = self.connect()
                    self._client = self._open(self.config)
                    self._client.deadline = self.deadline
                except PermissionDenied:
                    raise
                except HugindError as err:
                    # The guest sees a host error it can catch; the run goes on.
                    self.failure = err
                    raise PermissionDenied(f"llm: {err.message}") from None
            return self._client

    def _open(self, config: BackendConfig) -> ChatClient | FallbackClient:
        if not config.fallbacks:
            return config.make_client()
        from hugind.agentic.events import BackendRefused, BackendSwitch, as_sink
        from hugind.agentic.trace import make_tracer
        from hugind.llm.fallback import FallbackClient, chain_of

        sink, tracer = as_sink(self.events), make_tracer(self.trace)

        def admit(fallback: BackendConfig) -> Any:
            if self.policy is None:
                raise PermissionDenied(f"no network policy to admit the fallback {fallback.url}")
            try:
                target = self.policy.check_connect(fallback.url)  # chosen by the agent's author: checked like a fetch
            except PermissionDenied as err:
                raise _backend_denied(err, fallback.url) from None
            return _pin(target)  # the fallback's client connects only there

        def switched(source: str, target: str | None, reason: str) -> None:
            if target is None:
                sink.emit(BackendRefused(source, reason))
                tracer.line(f"fallback {source} refused: {reason}")
            else:
                sink.emit(BackendSwitch(source, target, reason))
                tracer.line(f"backend {source} failed ({reason}); switching to {target}")

        return FallbackClient(chain_of(config), admit=admit, on_switch=switched)

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
