"""What never enters a record: credential headers and the values of declared env vars.

API keys and backend headers never reach the recorder at all (it sees what
the guest sees and the loop's results, never the client's configuration).
Two things the guest itself may hold are taken out of every line:

* request headers that carry credentials (``Authorization``, ``Cookie``,
  ``X-Api-Key``, ... as the audit log masks them) become ``<redacted>``;
* the value of each declared env var (at least ``MIN_SECRET`` characters
  long: shorter ones would match everywhere) becomes a placeholder naming
  the variable. On replay the placeholders in recorded replies are put back
  from the replaying host's env, so a replay given the same env sees the
  same bytes, and requests are compared after the same scrubbing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hugind.policy.audit import SECRET_HEADERS

MIN_SECRET = 4
REDACTED = "<redacted>"


def _forms(value: str) -> list[str]:
    """The value as it appears in text: raw, then as escaped inside a JSON string."""
    forms = [value]
    for ascii_only in (False, True):
        escaped = json.dumps(value, ensure_ascii=ascii_only)[1:-1]
        if escaped not in forms:
            forms.append(escaped)
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

    def restore(self, text: str) -> str:
        """Placeholders back to this host's values (those it has)."""
        if "<<hugind-env:" not in text:
            return text
        for secret, placeholder in self._pairs:
            text = text.replace(placeholder, secret)
        return text

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
