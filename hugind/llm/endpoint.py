"""A backend's address and session modes: what resolving a backend needs of the client,
kept apart so that resolving one (which every run does) loads no HTTP code."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from hugind.llm.errors import BackendConfigError

SESSION_MODES = ("fresh", "resume", "stateless")
SESSION_HEADER = "X-Session-ID"


def api_base(url: str) -> str:
    """Normalise a backend URL to the base that ``/chat/completions`` hangs off.

    ``http://h:8080`` -> ``http://h:8080/v1``; a URL with a path is kept (so
    ``…/v1`` and ``…/api/v1`` work); a full ``…/chat/completions`` endpoint is
    cut back to its base as given (``http://h/chat/completions`` -> ``http://h``).
    """
    text = url.strip().rstrip("/")
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise BackendConfigError(f"backend URL must be http(s)://host[:port][/path], got {url!r}")
    if text.endswith("/chat/completions"):
        return text[: -len("/chat/completions")]  # an explicit endpoint is taken as given
    if not parts.path:
        text += "/v1"
    return text


@dataclass(frozen=True)
class Pin:
    """The addresses the network policy checked for a backend URL an agent chose.

    The client connects only to these (``hugind.llm.client.PinnedTransport``), the way
    ``net.fetch`` does: the Host header, TLS SNI and certificate name stay ``host``, so
    a second DNS answer (rebinding) can never redirect the connection."""

    scheme: str
    host: str
    port: int
    addresses: tuple[str, ...]

    @classmethod
    def of(cls, target: Any) -> Pin:
        """From the policy's checked target (``hugind.policy.net.NetTarget``)."""
        return cls(target.scheme, target.host, target.port, tuple(target.addresses))

    def origin(self) -> tuple[str, str, int]:
        return (self.scheme, self.host, self.port)
