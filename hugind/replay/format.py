"""The record format: NDJSON lines, each chained to the one before.

Line 0 is the header, then one line per event, then (if the run ended) a
closing line. Every line is one JSON object with ``seq`` (its index) and
``prev`` (the SHA-256, in hex, of the previous line's bytes; 64 zeros for
the header). Editing, removing or reordering a line breaks the chain at the
next line; cutting the file short leaves no closing line. A chain without a
key does not stop someone who rewrites every later line: pin the file's own
digest (printed when the record is written) for that.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

MAGIC = "hugind-record"
FORMAT_VERSION = 1
GENESIS = "0" * 64

# Event kinds (the "k" field). Channels keep independent orders on replay.
CALL = "call"  # a synchronous host op: req, reply
SUBMIT = "submit"  # an async host op started: req, id
DELIVER = "deliver"  # a completion handed to the guest: id, reply, final
CLOCK = "clock"  # WASI clock_time_get: id, errno, ns
RANDOM = "random"  # WASI random_get: hex
READ = "read"  # WASI fd_read: fd, errno, b64
CHAT = "chat"  # the agentic loop's LLM call: req (digest + last message), result or error
MCP_OFFER = "mcp.offer"  # the loop's MCP tool listing
MCP_CALL = "mcp.call"  # the loop's MCP tool call
AUDIT = "audit"  # one audit log entry, as written
END = "end"  # the closing line

GUEST_KINDS = frozenset({CALL, SUBMIT, DELIVER, CLOCK, RANDOM, READ})


def canonical(value: Any) -> str:
    """One spelling per value: sorted keys, no spaces, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def line_hash(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


def digest_of(value: Any) -> str:
    return "sha256:" + hashlib.sha256(canonical(value).encode("utf-8", "surrogatepass")).hexdigest()
