"""``ovisocr bench``: how fast is *your* endpoint, and where is its elbow?

For users with a GPU: parses freshly generated pages at several concurrency
levels (8, 16, 32, 64 by default) and reports pages/min with p50/p95 page
latency. Every page is new (a unique bar code and random text) and none is ever
sent twice: vLLM's multimodal processor cache would serve a repeated image
faster and inflate the result. The elbow is the lowest level that reaches 95% of
the best throughput; beyond it, more requests in flight only add latency.
"""

from __future__ import annotations

import io
import random
import statistics
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from PIL import Image

from .parser import OvisParser
from .testing.pages import next_page_id, page_image, write_pdf

ELBOW_SHARE = 0.95
_WORDS = ("invoice total amount date signature account balance payment customer order "
          "delivery address shipment quantity price tax reference number page report "
          "summary table figure results method analysis").split()


@dataclass(frozen=True)
class LevelResult:
    """One concurrency level: throughput and page latency (all tries of a page)."""

    concurrency: int
    pages: int
    seconds: float
    p50: float
    p95: float
    errors: int

    @property
    def pages_per_minute(self) -> float:
        return self.pages / self.seconds * 60 if self.seconds > 0 else 0.0


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


def measure(base_url: str | Sequence[str], model: str | None, concurrency: int, pdf: bytes,
            dpi: float = 150) -> LevelResult:
    """Parse ``pdf`` at ``concurrency`` requests in flight; time it end to end."""
    parser = OvisParser(base_url=base_url, model=model, concurrency=concurrency, dpi=dpi)
    start = time.perf_counter()
    doc = parser.parse(pdf, name=f"bench-c{concurrency}.pdf")
    seconds = time.perf_counter() - start
    latencies = [sum(a.latency_s for a in p.attempts) for p in doc.pages if p.ok]
    return LevelResult(concurrency, len(doc.pages), seconds,
                       statistics.median(latencies) if latencies else 0.0,
                       percentile(latencies, 0.95), len(doc.failed_pages))


def elbow(results: Sequence[LevelResult]) -> LevelResult:
    """The lowest concurrency within 5% of the best throughput."""
    best = max(r.pages_per_minute for r in results)
    return min((r for r in results if r.pages_per_minute >= ELBOW_SHARE * best),
               key=lambda r: r.concurrency)


def run(base_url: str | Sequence[str], model: str | None, levels: Sequence[int],
        pages_per_level: int | None = None, warmup: int = 4, dpi: float = 150,
        seed: int | None = None) -> list[LevelResult]:
    """Warm the server up, then measure every level on its own fresh pages."""
    rng = random.Random(seed)
    if warmup:
        measure(base_url, model, min(levels), unique_pdf(warmup, rng), dpi)
    results = []
    for level in levels:
        count = pages_per_level or max(16, 3 * level)
        results.append(measure(base_url, model, level, unique_pdf(count, rng), dpi))
    return results


def report(results: Sequence[LevelResult]) -> str:
    lines = [f"{'concurrency':>11} {'pages':>6} {'pages/min':>10} {'p50 s':>7} {'p95 s':>7} "
             f"{'errors':>7}"]
    for r in results:
        lines.append(f"{r.concurrency:>11} {r.pages:>6} {r.pages_per_minute:>10.0f} "
                     f"{r.p50:>7.2f} {r.p95:>7.2f} {r.errors:>7}")
    knee = elbow(results)
    lines.append(f"elbow: concurrency {knee.concurrency} ({knee.pages_per_minute:.0f} "
                 f"pages/min, p50 {knee.p50:.2f} s); use it as --concurrency")
    return "\n".join(lines)
