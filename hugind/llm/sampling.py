"""Sampling options (``max_tokens``, ``temperature``, ``top_p``, ``stop``, ``seed``):
the user's, per backend in config.yaml, and the agent's, in agent.yaml's ``sampling``.

The agent's only narrow what the user allows. For every request (the loop's
and the guest's ``ask_llm``):

* the agent's values fill in what the request leaves unset;
* ``max_tokens`` the user sets is a cap: a request asking for more (or for
  no limit) gets the user's (``max_completion_tokens`` too);
* ``temperature``, ``top_p`` and ``seed`` the user sets are fixed: the
  agent's and the request's are replaced;
* ``stop`` sequences the user sets are always sent; the agent's are added.

Values are checked when the file is read, with an error naming the key.
This module imports nothing of the LLM stack: agent.yaml is parsed with it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SAMPLING_KEYS = ("max_tokens", "temperature", "top_p", "stop", "seed")
MAX_TOKENS_LIMIT = 10_000_000
MAX_STOPS = 16
MAX_STOP_CHARS = 256
_INT64 = 2**63


class SamplingError(ValueError):
    """A sampling value of the wrong type or out of range (the message names the key)."""


def parse_sampling(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The sampling keys of ``entry``, checked (``stop`` as a list); others are ignored."""
    out: dict[str, Any] = {}
    for key in SAMPLING_KEYS:
        value = entry.get(key)
        if value is None:
            continue
        out[key] = _CHECKS[key](value)
    return out


def _max_tokens(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_TOKENS_LIMIT:
        raise SamplingError(f"'max_tokens' must be a whole number from 1 to {MAX_TOKENS_LIMIT}, got {value!r}")
    return value


def _number(key: str, low: float, high: float, low_open: bool = False) -> Any:
    def check(value: Any) -> float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if ok and (value > low or (value == low and not low_open)) and value <= high:
            return float(value)
        span = f"{'above' if low_open else 'from'} {low:g} {'up ' if low_open else ''}to {high:g}"
        raise SamplingError(f"'{key}' must be a number {span}, got {value!r}")

    return check


def _seed(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not -_INT64 <= value < _INT64:
        raise SamplingError(f"'seed' must be a whole number (64-bit), got {value!r}")
    return value


def _stop(value: Any) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(s, str) and s for s in items):
        raise SamplingError("'stop' must be a non-empty string or a list of them")
    if len(items) > MAX_STOPS or any(len(s) > MAX_STOP_CHARS for s in items):
        raise SamplingError(f"'stop' takes at most {MAX_STOPS} sequences of at most {MAX_STOP_CHARS} characters")
    return list(dict.fromkeys(items))


_CHECKS = {
    "max_tokens": _max_tokens,
    "temperature": _number("temperature", 0.0, 2.0),
    "top_p": _number("top_p", 0.0, 1.0, low_open=True),
    "stop": _stop,
    "seed": _seed,
}


@dataclass(frozen=True)
class SamplingRules:
    """The user's settings (bounds) and the agent's (defaults inside them), applied to a request body."""

    user: Mapping[str, Any] = field(default_factory=dict)
    agent: Mapping[str, Any] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.user or self.agent)

    def apply(self, body: dict[str, Any]) -> None:
        for key, value in self.agent.items():
            if key not in body:
                body[key] = list(value) if isinstance(value, list) else value
        user = self.user
        if "max_tokens" in user:
            cap = user["max_tokens"]
            asked = [k for k in ("max_tokens", "max_completion_tokens") if k in body]
            for key in asked:
                body[key] = min(body[key], cap) if _positive_int(body[key]) else cap
            if not asked:
                body["max_tokens"] = cap
        for key in ("temperature", "top_p", "seed"):
            if key in user:
                body[key] = user[key]
        if "stop" in user:
            extra = body.get("stop")
            extra = [extra] if isinstance(extra, str) else extra if isinstance(extra, list) else []
            body["stop"] = list(dict.fromkeys([*user["stop"], *(s for s in extra if isinstance(s, str) and s)]))


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
