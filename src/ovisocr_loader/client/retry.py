"""Transport retry decisions (pure): what to retry and how long to wait.

Backoff is exponential with full jitter and a cap; a server's Retry-After wins
(up to a cap). The one loop that sleeps lives in :mod:`.page_client`.
"""

from __future__ import annotations

import email.utils
import random
import time

from ..config import RetryPolicy
from ..errors import (
    OvisLoaderError,
    ServerConnectionError,
    ServerProtocolError,
    ServerStatusError,
    ServerTimeoutError,
)


def should_retry(error: OvisLoaderError, policy: RetryPolicy) -> bool:
    """Connection problems, timeouts, broken streams and 408/429/5xx are retried."""
    if isinstance(error, ServerStatusError):
        return error.status_code in policy.retry_statuses
    return isinstance(error, (ServerConnectionError, ServerTimeoutError, ServerProtocolError))


def next_delay(attempt: int, policy: RetryPolicy, retry_after: float | None = None,
               rng: random.Random | None = None) -> float:
    """Seconds to wait before try ``attempt + 1`` (``attempt`` counts from 1)."""
    if retry_after is not None:
        return min(max(0.0, retry_after), policy.max_retry_after)
    ceiling = min(policy.max_delay, policy.base_delay * (2 ** (attempt - 1)))
    return (rng or random).uniform(0, ceiling)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Parse a Retry-After header: delta-seconds or an HTTP date; None if absent or bad."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, parsed.timestamp() - (now if now is not None else time.time()))
