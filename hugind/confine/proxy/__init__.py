"""The network door of a confined child: an HTTP proxy on a Unix socket, decided by the policy engine.

A confined child runs in its own empty network namespace. The only way out is
a Unix socket (bind-mounted into its sandbox) served by :class:`ChildNetProxy`
on the host side; inside the namespace ``forwarder.py`` listens on
``127.0.0.1:PORT`` and relays every TCP connection to that socket, and the
child gets ``HTTP_PROXY``/``HTTPS_PROXY``/... pointing at the forwarder
(:func:`proxy_env`).

The proxy speaks the HTTP/1.1 proxy protocol, in three steps, one module each:

* **parse** (:mod:`.parse`): the child's bytes go into an h11 server
  connection; nothing reaches an origin that h11 has not parsed.
* **decide** (:mod:`.decide`): each request's target goes through
  ``engine.check_connect``, so it is matched, resolved once, classified and
  audited by the one policy engine exactly like ``net.fetch``; the proxy then
  connects only to the pinned, checked addresses (never resolving again).
* **relay** (:mod:`.relay`): ``CONNECT host:port`` is answered ``200`` and
  becomes a tunnel of opaque bytes (those the child sent behind its head
  first). An absolute-form ``METHOD http://host[:port]/path`` request goes to
  its origin in origin-form through a fresh h11 client connection, events
  relayed both ways: ``Host`` set from the checked URL, ``Proxy-*`` and
  hop-by-hop headers dropped, ``Connection: close`` to the origin.

Every request a connection carries is parsed and decided on its own: by
default the response says ``Connection: close`` and the connection ends there
(a request the child pipelined behind it is never read); with
``ProxyLimits.keep_alive`` the next request is read, decided and relayed like
the first. A refusal is a ``403`` whose one-line body names the rule; a request
the proxy cannot parse is a ``400`` (``431`` for a head over the limits; not
audited: there is no target to decide on); a checked target that cannot be
reached, or that answers with something h11 cannot parse, is a ``502``.

Scheme and port: the policy decides on host and port; the scheme only gives a
default port, and the proxy always has an explicit one (CONNECT must name a
port; an absolute URL without one means 80). So ``CONNECT example.com:443`` and
``fetch("https://example.com/")`` are the same decision, and an
``allowed_domains`` entry without ``:port`` lets a child tunnel to **any** port
of that host, with any protocol (ssh on 22 included): write
``example.com:443`` to allow TLS only. Absolute-form requests must be
``http://`` (an ``https://`` URL needs TLS, which is the child's job through
CONNECT); other schemes are a ``400``.

Bounds, so that nothing hangs and ``close()`` is prompt: a request head must
arrive within ``header_timeout`` and fit in ``max_header_bytes`` and
``max_header_lines`` (else 408 / 431); connecting to the origin is bounded by
``engine.policy.net.timeout``; a connection where no byte moves for
``idle_timeout`` is closed; at most ``max_connections`` connections are served
at once (more get a 503 at once); every wait also watches a stop pipe that
``close()`` closes. Bytes are not capped by default: the proxy streams through
fixed buffers (its memory is bounded by connections x buffers), a TLS tunnel
is opaque anyway, and the fetch cap ``max_response_bytes`` counts decoded
bodies, which a relay never sees; capping plain HTTP alone would only push
children to HTTPS. Set ``ProxyLimits.max_bytes`` to cap what one connection
may bring in.

Unlike ``net.fetch``, the proxy does not follow redirects (the child does, and
each new target comes back through here and is checked again), does not
decode bodies, and leaves request headers to the child except ``Host``,
``Proxy-*`` and hop-by-hop ones. A tunnel's bytes are opaque: what is decided
is where the connection goes, not what it says.
"""

from __future__ import annotations

from pathlib import Path

from hugind.confine.proxy.base import ProxyLimits, ProxyStats, Reply
from hugind.confine.proxy.parse import ProxyRequest, parse_request_head
from hugind.confine.proxy.server import ChildNetProxy

__all__ = [
    "FORWARDER_PATH",
    "PROXY_VARIABLES",
    "ChildNetProxy",
    "ProxyLimits",
    "ProxyRequest",
    "ProxyStats",
    "Reply",
    "forwarder_argv",
    "parse_request_head",
    "proxy_env",
]

# The forwarder the child's sandbox runs (``python3 -I forwarder.py ...``); it must not import hugind.
FORWARDER_PATH = Path(__file__).parent.with_name("forwarder.py")

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def proxy_env(port: int) -> dict[str, str]:
    """The environment that sends a confined child's HTTP(S) traffic to the forwarder on ``port``.

    Both spellings, because tools disagree (curl ignores upper-case ``HTTP_PROXY``;
    Python and Go read either). ``NO_PROXY`` is emptied so nothing bypasses the proxy
    (a bypass could only reach the namespace's own empty loopback anyway).
    """
    if not 0 < port < 65536:
        raise ValueError(f"invalid port {port}")
    url = f"http://127.0.0.1:{port}"
    env = dict.fromkeys(PROXY_VARIABLES, url)
    env.update(NO_PROXY="", no_proxy="")
    return env


def forwarder_argv(
    port: int, socket_path: str | Path, argv: list[str], *, python: str = "python3", script: str | Path = FORWARDER_PATH
) -> list[str]:
    """The command line that runs ``argv`` behind the forwarder (paths as the sandbox sees them).

    ``-I -S``: no environment, user site or site-packages (.pth files can cost tens of ms); stdlib only.
    """
    return [python, "-I", "-S", str(script), "--port", str(port), "--unix", str(socket_path), "--", *argv]
