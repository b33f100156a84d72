"""A throughput/latency model of one OvisOCR2 server, calibrated to field numbers.

One RTX 5090 measured 8 -> 304, 16 -> 427, 32 -> 590, 64 -> 550, 96 -> 535
pages/min (p50 latency 1.6 / 2.2 / 3.0 / 5.7 / 8.7 s) at ~600 tokens a page.
The model is processor sharing: the server decodes ``T(n)`` pages/min worth of
tokens in total when ``n`` requests run, split evenly among them. That gives a
lone straggler the full single-stream speed and reproduces the table's
latencies within ~20% (8 -> 1.6 s, 16 -> 2.2 s, 32 -> 3.3 s). ``speed``
multiplies every rate so tests run fast.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

#: (requests running, pages/min); the n=1 point is an estimate (about 0.8 s a page).
FIELD_THROUGHPUT: tuple[tuple[int, float], ...] = (
    (1, 75.0), (8, 304.0), (16, 427.0), (32, 590.0), (64, 550.0), (96, 535.0),
)


#: A small card (elbow ~12): more requests in flight only thrash its KV cache.
SMALL_GPU_THROUGHPUT: tuple[tuple[int, float], ...] = (
    (1, 60.0), (4, 170.0), (8, 250.0), (12, 290.0), (16, 285.0), (24, 255.0), (32, 235.0),
    (64, 210.0), (128, 200.0),
)
#: A >= 70 GB card (elbow ~128).
LARGE_GPU_THROUGHPUT: tuple[tuple[int, float], ...] = (
    (1, 90.0), (16, 620.0), (32, 1000.0), (64, 1500.0), (96, 1780.0), (128, 1900.0),
    (160, 1920.0), (192, 1880.0), (256, 1800.0), (384, 1700.0),
)


@dataclass(frozen=True)
class LatencyModel:
    """Per-request decode rate as a function of requests running."""

    speed: float = 1.0
    tokens_per_page: int = 600
    #: time to first token (prefill) in seconds, before ``speed``.
    prefill_s: float = 0.12
    table: tuple[tuple[int, float], ...] = FIELD_THROUGHPUT


    def pages_per_minute(self, running: int) -> float:
        """Server throughput with ``running`` requests, interpolated from the table."""
        points = self.table
        n = max(1, running)
        if n <= points[0][0]:
            return points[0][1]
        for (n0, t0), (n1, t1) in itertools.pairwise(points):
            if n <= n1:
                return t0 + (t1 - t0) * (n - n0) / (n1 - n0)
        return points[-1][1]

    def tokens_per_second(self, running: int) -> float:
        """Decode rate one request gets while ``running`` requests share the server."""
        n = max(1, running)
        total = self.pages_per_minute(n) / 60.0 * self.tokens_per_page
        return total / n * self.speed

    def prefill_seconds(self) -> float:
        return self.prefill_s / self.speed


@dataclass(frozen=True)
class GpuProfile:
    """A simulated GPU: its capacity curve, its admission limit (vLLM's
    ``max_num_seqs``: requests beyond it wait) and how many requests fill its KV
    cache (``vllm:kv_cache_usage_perc`` is running / ``kv_slots``; admitting more
    preempts, as vLLM does)."""

    name: str
    table: tuple[tuple[int, float], ...]
    max_num_seqs: int
    kv_slots: int

    def latency(self, speed: float = 1.0, tokens_per_page: int = 600) -> LatencyModel:
        return LatencyModel(speed=speed, tokens_per_page=tokens_per_page, table=self.table)


GPU_PROFILES: dict[str, GpuProfile] = {
    "small": GpuProfile("small", SMALL_GPU_THROUGHPUT, max_num_seqs=64, kv_slots=14),
    "rtx5090": GpuProfile("rtx5090", FIELD_THROUGHPUT, max_num_seqs=256, kv_slots=38),
    "large": GpuProfile("large", LARGE_GPU_THROUGHPUT, max_num_seqs=1024, kv_slots=150),
}
