"""``ovisocr bench``: how fast is *your* endpoint, and where is its elbow?

For users with a GPU: parses freshly generated pages at several concurrency
levels (8, 16, 32, 64 by default) and reports pages/min with p50/p95 page
latency. Every page is new (a unique bar code and random text) and none is ever
sent twice: vLLM's multimodal processor cache would serve a repeated image
faster and inflate the result. The elbow is the lowest level that reaches 95% of
the best throughput; beyond it, more requests in flight only add latency. It also
says what this client spends per page (CPU of the process and of its event-loop
thread, event-loop lag), to see whether one client process can keep the GPU busy.
"""

from __future__ import annotations

import asyncio
import io
import random
import statistics
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from PIL import Image

from .parser import OvisParser
from .testing.pages import next_page_id, page_image, write_pdf

ELBOW_SHARE = 0.95
_WORDS = ("invoice total amount date signature account balance payment customer order "
          "delivery address shipment quantity price tax reference number page report "
          "summary table figure results method analysis").split()


@dataclass(frozen=True)
class LevelResult:
    """One concurrency level: throughput, page latency (all tries of a page), and what
    this client spent per page: CPU of the process and of its event-loop thread, and
    how late the loop ran (p99 of a 5 ms sleep's overshoot)."""

    concurrency: int
    pages: int
    seconds: float
    p50: float
    p95: float
    errors: int
    cpu_ms: float = 0.0
    loop_cpu_ms: float = 0.0
    lag_p99_ms: float = 0.0

    @property
    def pages_per_minute(self) -> float:
        return self.pages / self.seconds * 60 if self.seconds > 0 else 0.0


class LagMonitor:
    """Event-loop lag: a task that asks to sleep ``tick`` seconds and records how late
    it wakes. A busy loop (parsing, a lock taken on its thread) shows here first."""

    def __init__(self, tick: float = 0.005) -> None:
        self.tick = tick
        self.samples: list[float] = []
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def percentile(self, share: float) -> float:
        return percentile(self.samples, share)

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            asked = loop.time()
            await asyncio.sleep(self.tick)
            self.samples.append(loop.time() - asked - self.tick)


def unique_pdf(count: int, rng: random.Random) -> bytes:
    """``count`` never-seen-before Letter pages of text, as a scanner would deliver them."""
    def pages() -> Iterator[Image.Image]:
        for _ in range(count):
            lines = [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 11)))
                     for _ in range(rng.randint(20, 40))]
            yield page_image(next_page_id(), lines=lines)

    buffer = io.BytesIO()
    write_pdf(buffer, pages())
    return buffer.getvalue()


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def measure(concurrency: int, pdf: bytes, **parser_options: Any) -> LevelResult:
    """Parse ``pdf`` at ``concurrency`` requests in flight; time it end to end.
    ``parser_options`` are :class:`OvisParser`'s (endpoint, model, dpi, ...)."""
    # a measurement: every page must reach the server, never the cache
    parser = OvisParser(**{**parser_options, "cache_dir": False}, concurrency=concurrency)
    return asyncio.run(_measure(parser, concurrency, pdf))


async def _measure(parser: OvisParser, concurrency: int, pdf: bytes) -> LevelResult:
    lag = LagMonitor()
    lag.start()
    cpu, loop_cpu, start = time.process_time(), time.thread_time(), time.perf_counter()
    doc = await parser.aparse(pdf, name=f"bench-c{concurrency}.pdf")
    seconds = time.perf_counter() - start
    cpu, loop_cpu = time.process_time() - cpu, time.thread_time() - loop_cpu
    await lag.stop()
    latencies = [sum(a.latency_s for a in p.attempts) for p in doc.pages if p.ok]
    pages = max(1, len(doc.pages))
    return LevelResult(concurrency, len(doc.pages), seconds,
                       statistics.median(latencies) if latencies else 0.0,
                       percentile(latencies, 0.95), len(doc.failed_pages),
                       cpu / pages * 1000, loop_cpu / pages * 1000,
                       lag.percentile(0.99) * 1000)


def elbow(results: Sequence[LevelResult]) -> LevelResult:
    """The lowest concurrency within 5% of the best throughput."""
    best = max(r.pages_per_minute for r in results)
    return min((r for r in results if r.pages_per_minute >= ELBOW_SHARE * best),
               key=lambda r: r.concurrency)


def run(levels: Sequence[int], pages_per_level: int | None = None, warmup: int = 4,
        seed: int | None = None, **parser_options: Any) -> list[LevelResult]:
    """Warm the server up, then measure every level on its own fresh pages."""
    rng = random.Random(seed)
    if warmup:
        measure(min(levels), unique_pdf(warmup, rng), **parser_options)
    results = []
    for level in levels:
        count = pages_per_level or max(16, 3 * level)
        results.append(measure(level, unique_pdf(count, rng), **parser_options))
    return results


def report(results: Sequence[LevelResult]) -> str:
    lines = [f"{'concurrency':>11} {'pages':>6} {'pages/min':>10} {'p50 s':>7} {'p95 s':>7} "
             f"{'errors':>7} {'client CPU ms/page':>18} {'loop ms/page':>12} "
             f"{'lag p99 ms':>10}"]
    for r in results:
        lines.append(f"{r.concurrency:>11} {r.pages:>6} {r.pages_per_minute:>10.0f} "
                     f"{r.p50:>7.2f} {r.p95:>7.2f} {r.errors:>7} {r.cpu_ms:>18.1f} "
                     f"{r.loop_cpu_ms:>12.1f} {r.lag_p99_ms:>10.1f}")
    knee = elbow(results)
    lines.append(f"elbow: concurrency {knee.concurrency} ({knee.pages_per_minute:.0f} "
                 f"pages/min, p50 {knee.p50:.2f} s); use it as --concurrency")
    return "\n".join(lines)
