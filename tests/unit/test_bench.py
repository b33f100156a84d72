"""The elbow and percentile arithmetic of ``ovisocr bench`` (pure)."""

from __future__ import annotations

from ovisocr_loader.bench import LevelResult, elbow, percentile, report


def level(concurrency: int, pages_per_minute: float, p50: float = 1.0) -> LevelResult:
    return LevelResult(concurrency, pages=60, seconds=60 * 60 / pages_per_minute, p50=p50,
                       p95=2 * p50, errors=0)


def test_elbow_is_the_lowest_level_within_five_percent_of_the_best():
    field = [level(8, 304), level(16, 427), level(32, 590), level(64, 550)]
    assert elbow(field).concurrency == 32
    flat = [level(8, 500), level(16, 580), level(32, 590), level(64, 600)]
    assert elbow(flat).concurrency == 16          # 580 >= 0.95 * 600


def test_percentile_and_report():
    assert percentile([5.0, 1.0, 3.0, 2.0, 4.0], 0.5) == 3.0
    assert percentile([1.0, 2.0, 3.0], 0.95) == 3.0
    assert percentile([], 0.5) == 0.0
    text = report([level(8, 304, 1.6), level(32, 590, 3.3)])
    assert "elbow: concurrency 32 (590 pages/min, p50 3.30 s)" in text
    assert text.splitlines()[1].split() == ["8", "60", "304", "1.60", "3.20", "0", "0.0",
                                            "0.0", "0.0"]
