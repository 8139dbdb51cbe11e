"""Retry timing: exponential backoff with jitter, Retry-After honoured and capped."""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    base_delay: float = 0.5  # first backoff, doubled at each further attempt
    max_delay: float = 8.0  # cap of one computed backoff
    max_retry_after: float = 30.0  # cap of a server's Retry-After
    max_total_wait: float = 60.0  # sleeping across all retries never exceeds this
    jitter: float = 0.25  # a backoff is shortened by up to this fraction at random
    retry_timeouts: bool = False  # a read timeout usually repeats; off by default

    def delay(self, retry_number: int, retry_after: float | None, rng: random.Random | None = None) -> float:
        """Seconds to wait before retry ``retry_number`` (1 for the first retry)."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_retry_after)
        backoff = min(self.max_delay, self.base_delay * (2 ** max(0, retry_number - 1)))
        spread = (rng or random).random() * self.jitter
        return max(0.0, backoff * (1.0 - spread))


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000.0
        except ValueError:
            value = -1.0
        if value >= 0:
            return value
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        value = float(raw)
        return value if value >= 0 else None
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
