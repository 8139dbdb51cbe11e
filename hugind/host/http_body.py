"""HTTP bodies between the guest and ``net.fetch``: text where text is exact, base64 where not.

Host calls travel as JSON, which carries text, not bytes. A body that is valid
UTF-8 travels as its text (``body``), and its UTF-8 is exactly the bytes. Any
other body (an image, a gzip file, text in Latin-1) travels as ``body_base64``
too, so the guest gets its bytes exactly; ``body`` then holds the text with
each invalid sequence replaced by U+FFFD, for callers that want text. One
rule for every guest: the bytes are ``body_base64`` decoded when it is there,
else ``body`` in UTF-8.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from hugind.errors import LimitHit
from hugind.host.registry import bytes_arg


def request_body(args: Mapping[str, Any], cap: int) -> bytes | None:
    """The request's bytes from ``body`` (text) or ``body_base64``; None when neither is given."""
    encoded = args.get("body_base64")
    if isinstance(encoded, str) and len(encoded) > (cap + 2) // 3 * 4:  # refused before decoding it
        raise LimitHit(f"network: request body over {cap} bytes")
    body = bytes_arg(args, "body", "body_base64")
    if body is not None and len(body) > cap:
        raise LimitHit(f"network: request body over {cap} bytes")
    return body


def response_body(data: bytes) -> dict[str, str]:
    """The answer's body fields for ``data``: ``body``, and ``body_base64`` unless ``body`` is exact."""
    try:
        return {"body": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {
            "body": data.decode("utf-8", errors="replace"),
            "body_base64": base64.b64encode(data).decode("ascii"),
        }


def chunk_event(data: bytes) -> dict[str, str]:
    """A piece of a streamed body (``net.fetch_stream``): ``chunk`` where its UTF-8 is exact, else
    ``chunk_base64``. A piece may end inside a character; the guest joins the bytes."""
    try:
        return {"chunk": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"chunk_base64": base64.b64encode(data).decode("ascii")}
