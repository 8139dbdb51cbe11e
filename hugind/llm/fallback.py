"""A chain of backends behind one ``complete``: when one fails in a way another
server could fix, the next takes over, in order, for the rest of the run.

What moves the chain on: nothing answered (connection refused, DNS, connect
timeout), no answer in time, a 5xx or dropped connection after the client's own
retries, a 429 after its retry budget (rate limit or quota: another provider has
its own). What does not: 401/403 and other 4xx (the user's key, URL or request
is wrong, and a second server would hide that), a context overflow (the loop
compacts the conversation), an answer that is not a chat completion, the run's
deadline (it bounds the whole chain), and a streamed answer whose tokens the
caller has already seen (replaying them elsewhere would show them twice).

The switch is sticky: later requests go straight to the backend that answered.
Every fallback in ``fresh`` mode sends the run's session id, so the id the agent
sees in ``input.meta.session`` names the conversation whichever server holds it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hugind.errors import BackendError, PermissionDenied
from hugind.llm.errors import (
    BackendCallError,
    BackendTimeoutError,
    BackendUnreachableError,
    PermanentBackendError,
    RateLimitError,
    TransientBackendError,
)

if TYPE_CHECKING:
    from hugind.llm.client import ChatClient
    from hugind.llm.config import BackendConfig
    from hugind.llm.types import ChatResult

# (from label, to label, reason); to is None when a fallback was refused and skipped
SwitchHook = Callable[[str, "str | None", str], None]
_MOVES_ON = (BackendUnreachableError, BackendTimeoutError, TransientBackendError, RateLimitError)


def moves_on(err: BackendCallError) -> bool:
    """True when another backend could answer where this one failed."""
    if isinstance(err, _MOVES_ON):
        return True
    return isinstance(err, PermanentBackendError) and err.status == 429  # quota exhausted


def chain_of(primary: BackendConfig) -> list[BackendConfig]:
    """The primary and its fallbacks; fresh-mode fallbacks carry the primary's session id."""
    chain = [replace(primary, fallbacks=())]
    for config in primary.fallbacks:
        if config.session_mode == "fresh" and primary.session_id:
            config = replace(config, session_id=primary.session_id)
        chain.append(config)
    return chain


class FallbackClient:
    """``ChatClient.complete`` over a chain of backends (see the module docstring)."""

    def __init__(
        self,
        chain: Sequence[BackendConfig],
        *,
        admit: Callable[[BackendConfig], Any] | None = None,
        on_switch: SwitchHook | None = None,
    ) -> None:
        if not chain:
            raise ValueError("a fallback chain needs at least one backend")
        self.chain = list(chain)
        self.admit = admit  # raises PermissionDenied for a URL the agent's policy refuses, else returns its pin
        self.on_switch = on_switch
        self.index = 0
        self._clients: dict[int, ChatClient] = {}
        self._deadline: float | None = None

    @property
    def deadline(self) -> float | None:
        return self._deadline

    @deadline.setter
    def deadline(self, value: float | None) -> None:
        self._deadline = value
        for client in self._clients.values():
            client.deadline = value

    @property
    def current(self) -> BackendConfig:
        return self.chain[self.index]

    def _client(self) -> ChatClient:
        client = self._clients.get(self.index)
        if client is None:
            client = self.current.make_client()
            client.deadline = self._deadline
            self._clients[self.index] = client
        return client

    def complete(self, messages: Sequence[Mapping[str, Any]], **kwargs: Any) -> ChatResult:
        while True:
            tokens = _TokenCount(kwargs.get("on_token"))
            call = {**kwargs, "on_token": tokens if tokens.fn is not None else None}
            try:
                return self._client().complete(messages, **call)
            except BackendCallError as err:
                if not moves_on(err) or tokens.count:
                    raise
                self._move_on(err)

    def _move_on(self, err: BackendCallError) -> None:
        """Advance to the next admitted backend, or raise ``err`` (with why) if none is left."""
        failed = self.current.label
        reason = err.message
        refused: list[str] = []
        while self.index + 1 < len(self.chain):
            self.index += 1
            candidate = self.current
            if candidate.from_agent and self.admit is not None:
                try:
                    pin = self.admit(candidate)
                    if pin is not None:  # connect only to the addresses the policy checked
                        self.chain[self.index] = replace(candidate, pin=pin)
                except PermissionDenied as denied:
                    refused.append(f"fallback {candidate.url} refused: {denied.message}")
                    self._tell(candidate.label, None, denied.message)
                    continue
            self._tell(failed, candidate.label, reason)
            return
        if refused:
            raise BackendError(f"{reason}; no fallback could take over ({'; '.join(refused)})") from err
        raise err

    def _tell(self, source: str, target: str | None, reason: str) -> None:
        if self.on_switch is not None:
            self.on_switch(source, target, reason)

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()


class _TokenCount:
    """Passes tokens on and counts them: a stream the caller has seen is not replayed elsewhere."""

    def __init__(self, fn: Callable[[str], None] | None) -> None:
        self.fn = fn
        self.count = 0

    def __call__(self, text: str) -> None:
        self.count += 1
        if self.fn is not None:
            self.fn(text)
