"""Small frozen settings objects that travel through the pipeline.

They play the role of httpx's ``Timeout`` and ``Limits``: each groups the knobs of
one concern, has field-tested defaults, and is passed as one object instead of a
long tail of keyword arguments.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: The model's pixel bounds (448*448 .. 2880*2880), per the model card.
MIN_PIXELS = 448 * 448
MAX_PIXELS = 2880 * 2880
#: Render resolutions accepted anywhere (below 150 tables already fuse).
DPI_RANGE = (72.0, 1200.0)


@dataclass(frozen=True)
class RenderSettings:
    """How pages become images.

    150 DPI gave +50% throughput over 200 DPI with no quality loss in the field;
    below 150 tables fuse. Pages are then scaled (never cropped) into the model's
    pixel bounds.
    """

    dpi: float = 150.0
    min_pixels: int = MIN_PIXELS
    max_pixels: int = MAX_PIXELS
    #: deflate level for PNG: 2 keeps client CPU low (zlib-ng's 2 is smaller than zlib's
    #: 1, in half the time; its 1 is 15-25% larger); the bytes only cross a LAN.
    png_compress_level: int = 2
    #: "auto": turn each page upright before sending (the ``orientation`` extra)
    orientation: Literal["off", "auto"] = "off"

    def __post_init__(self) -> None:
        if not DPI_RANGE[0] <= self.dpi <= DPI_RANGE[1]:
            raise ValueError(f"dpi must be between {DPI_RANGE[0]:g} and {DPI_RANGE[1]:g}, "
                             f"got {self.dpi:g}")
        if not 0 < self.min_pixels < self.max_pixels:
            raise ValueError("need 0 < min_pixels < max_pixels")
        if self.orientation not in ("off", "auto"):
            raise ValueError(f'orientation must be "off" or "auto", got {self.orientation!r}')


@dataclass(frozen=True)
class Timeouts:
    """Bounds on every network wait, in seconds.

    ``first_token`` covers connecting, queueing on the server and prefill;
    ``page`` bounds one whole attempt including streaming. ``connect`` is the TCP
    connect bound, and ``probe`` the bound of the one reachability check made before
    the first page is sent.
    """

    first_token: float = 120.0
    page: float = 900.0
    connect: float = 5.0
    probe: float = 10.0

    def __post_init__(self) -> None:
        for name in ("first_token", "page", "connect", "probe"):
            if getattr(self, name) <= 0:
                raise ValueError(f"timeout {name} must be positive")


@dataclass(frozen=True)
class RetryPolicy:
    """Transport retries: exponential backoff with full jitter, bounded by attempts.

    Retry-After from the server wins over the computed delay, up to
    ``max_retry_after`` seconds.
    """

    max_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0
    retry_statuses: frozenset[int] = frozenset({408, 429, 500, 502, 503, 504})

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")


@dataclass(frozen=True)
class GuardPolicy:
    """The decoding guard: the field recipe against greedy repetition loops.

    First pass greedy, no penalty, ``first_max_tokens``; a degenerate tail closes
    the stream at once and the page is retried once with ``frequency_penalty``;
    a clean page that hit the cap is retried once with ``long_max_tokens``.
    """

    first_max_tokens: int = 4096
    long_max_tokens: int = 16384
    frequency_penalty: float = 0.3
    #: a plain-text periodic tail of at least this many characters is a loop ...
    min_loop_chars: int = 400
    #: ... if its unit repeats at least this often.
    min_loop_repeats: int = 8
    #: a unit holding HTML markup (table rows) must repeat this often, so that
    #: long tables of identical rows never count as loops.
    min_markup_repeats: int = 100
    max_period: int = 200
    #: inspect the stream every this many new characters.
    check_every_chars: int = 64
    #: also send vLLM's server-side ``repetition_detection`` (vLLM >= 0.22).
    server_repetition_detection: bool = False


@dataclass(frozen=True)
class HealthPolicy:
    """When an endpoint is taken out, when it is tried again, how long a run waits.

    An endpoint is out after ``max_failures`` failed requests in a row (connection
    errors, timeouts, a gateway's 502/503/504; a first token breaks the row) or a
    failed probe; it is probed again (``/v1/models``)
    after ``cooldown`` seconds, doubling up to ``max_cooldown``. While every
    endpoint is out (a restarting server) requests wait, up to ``wait_for_any``
    seconds from the start of the outage (``server_wait``), then fail together.
    """

    max_failures: int = 3
    cooldown: float = 2.0
    max_cooldown: float = 10.0
    wait_for_any: float = 600.0
    poll_interval: float = 0.25

    def __post_init__(self) -> None:
        if self.max_failures < 1:
            raise ValueError("max_failures must be at least 1")
        if self.wait_for_any < 0 or self.cooldown <= 0 or self.poll_interval <= 0:
            raise ValueError("server_wait must be >= 0; cooldown and poll_interval > 0")
