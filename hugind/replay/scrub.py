"""What never enters a record: credential headers and the values of declared env vars.

API keys and backend headers never reach the recorder at all (it sees what
the guest sees and the loop's results, never the client's configuration).
Two things the guest itself may hold are taken out of every line:

* request headers that carry credentials (``Authorization``, ``Cookie``,
  ``X-Api-Key``, ... as the audit log masks them) become ``<redacted>``;
* the value of each declared env var (at least ``MIN_SECRET`` characters
  long: shorter ones would match everywhere) becomes a placeholder naming
  the variable, in every form it takes in text: as is, JSON-escaped,
  URL-encoded, and base64-encoded (standard and URL-safe alphabets, at each
  of the three alignments it can have inside a longer encoded string: the
  characters that only the value's own bytes decide). On replay the
  placeholders in recorded replies are put back from the replaying host's
  env, so a replay given the same env sees the same bytes, and requests are
  compared after the same scrubbing.

A value the model streams may arrive split across tokens: ``tokens`` joins
the tokens that a value spans into one before the line is written, so the
value is found whole.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, quote_plus

from hugind.policy.audit import SECRET_HEADERS

MIN_SECRET = 4
MIN_ENCODED = 8  # characters of an encoded value's core: shorter cores would match by chance
REDACTED = "<redacted>"


def _base64_cores(data: bytes) -> list[str]:
    """The base64 characters that ``data`` alone decides, at each alignment inside a longer string."""
    cores = []
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + data).decode()
        first = -(-shift // 3)  # the first 3-byte group made of the value's bytes only
        last = (shift + len(data)) // 3  # one past the last such group
        core = encoded[first * 4 : last * 4]
        if len(core) >= MIN_ENCODED:
            cores.append(core)
    return cores


def _forms(value: str) -> list[str]:
    """The value as it appears in text: raw, JSON-escaped, URL-encoded, base64-encoded."""
    forms = [value]

    def add(form: str) -> None:
        if form not in forms:
            forms.append(form)

    for ascii_only in (False, True):
        add(json.dumps(value, ensure_ascii=ascii_only)[1:-1])
    raw = value.encode("utf-8", "surrogatepass")
    for encoded in (quote(value, safe=""), quote(value), quote_plus(value)):
        add(encoded)
    for core in _base64_cores(raw):
        add(core)
        add(core.replace("+", "-").replace("/", "_"))
    return forms


class Scrubber:
    def __init__(self, env: Mapping[str, str]) -> None:
        pairs: list[tuple[str, str]] = []
        for name, value in env.items():
            if len(value) < MIN_SECRET:
                continue
            for i, form in enumerate(_forms(value)):
                pairs.append((form, f"<<hugind-env:{name}:{i}>>"))
        # Longest first: a value containing another is replaced whole.
        self._pairs = sorted(pairs, key=lambda p: -len(p[0]))

    def text(self, text: str) -> str:
        for secret, placeholder in self._pairs:
            if secret in text:
                text = text.replace(secret, placeholder)
        return text

    def tokens(self, tokens: Sequence[str]) -> list[str]:
        """``tokens`` with every run of tokens that a secret spans joined into one token."""
        if not self._pairs or len(tokens) < 2:
            return list(tokens)
        joined = "".join(tokens)
        spans = []
        for secret, _ in self._pairs:
            at = joined.find(secret)
            while at >= 0:
                spans.append((at, at + len(secret)))
                at = joined.find(secret, at + 1)
        if not spans:
            return list(tokens)
        merged: list[str] = []
        start = 0
        open_until = 0  # a token starting before this offset joins the one before it
        for token in tokens:
            end = start + len(token)
            if merged and start < open_until:
                merged[-1] += token
            else:
                merged.append(token)
            for s_start, s_end in spans:
                if s_start < end and s_end > end:  # a secret goes on past this token
                    open_until = max(open_until, s_end)
            start = end
        return merged

    def restore(self, text: str) -> str:
        """Placeholders back to this host's values (those it has)."""
        if "<<hugind-env:" not in text:
            return text
        for secret, placeholder in self._pairs:
            text = text.replace(placeholder, secret)
        return text

    def restored(self, value: Any) -> Any:
        """Every string in a JSON value with its placeholders put back (a copy)."""
        if isinstance(value, str):
            return self.restore(value)
        if isinstance(value, dict):
            return {k: self.restored(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.restored(v) for v in value]
        return value

    def value(self, value: Any) -> Any:
        """Every string in a JSON value scrubbed (a copy)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value


def redact_request(value: Any, key: str = "") -> Any:
    """A guest request with the credentials of any ``headers`` object masked (a copy)."""
    if isinstance(value, dict):
        secret = key.lower() == "headers"
        return {
            k: REDACTED if secret and str(k).lower() in SECRET_HEADERS else redact_request(v, str(k))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact_request(v) for v in value]
    return value
