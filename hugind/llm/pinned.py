"""An httpx transport that connects only to the addresses the network policy checked.

A backend URL an agent chose passes ``check_connect`` (resolve once, every
answer checked); letting httpx resolve the name again would open a rebinding
window around ``block_private_networks``. Like ``net.fetch``
(``hugind/host/net.py``), each request is sent to a checked address itself:
the URL's host becomes the address, while the ``Host`` header (set from the
original URL when the request was built), TLS SNI and the certificate's name
stay the name. No name is ever resolved here.
"""

from __future__ import annotations

from typing import Any

import httpx

from hugind.llm.endpoint import Pin

DEFAULT_PORTS = {"http": 80, "https": 443}


class PinnedTransport(httpx.BaseTransport):
    """Send every request to one of ``pin.addresses``; refuse any other origin."""

    def __init__(self, inner: httpx.BaseTransport, pin: Pin) -> None:
        self.inner = inner
        self.pin = pin

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        origin = (url.scheme, url.host, url.port or DEFAULT_PORTS.get(url.scheme, 0))
        if origin != self.pin.origin():
            # Only the checked origin: anything else was never checked.
            raise httpx.ConnectError(f"{url.scheme}://{url.host}: not the address the network policy checked")
        if url.scheme == "https":
            request.extensions = {**request.extensions, "sni_hostname": self.pin.host}
        last: Exception | None = None
        for address in self.pin.addresses:
            request.url = url.copy_with(host=address)
            try:
                return self.inner.handle_request(request)
            except httpx.ConnectError as exc:
                last = exc
            finally:
                request.url = url
        raise httpx.ConnectError(f"cannot connect to {self.pin.host} port {self.pin.port}") from last

    def close(self) -> None:
        self.inner.close()


def pinned_transport(pin: Pin, verify: Any) -> PinnedTransport:
    return PinnedTransport(httpx.HTTPTransport(verify=verify, trust_env=False), pin)
