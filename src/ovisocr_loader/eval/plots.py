"""Two small SVG charts of a comparison, with no plotting dependency: per-document
F1 of A against B (points above the diagonal are documents B reads better), and a
histogram of each run's F1 (or of the agreement, without references)."""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import escape

from ..writes import write_atomically
from .scores import Comparison

_SIZE, _PAD = 420, 50
_BINS = 20
_COLOURS = ("#1f77b4", "#ff7f0e")


def write_plots(comparison: Comparison, folder: str | Path) -> list[Path]:
    """``scatter.svg`` (with references) and ``histogram.svg`` in ``folder``."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    if comparison.with_reference:
        written.append(_write(out / "scatter.svg", scatter_svg(comparison)))
    written.append(_write(out / "histogram.svg", histogram_svg(comparison)))
    return written


def _write(path: Path, svg: str) -> Path:
    write_atomically(path, svg)
    return path


def _x(value: float) -> float:
    return _PAD + value * (_SIZE - 2 * _PAD)


def _y(value: float) -> float:
    return _SIZE - _PAD - value * (_SIZE - 2 * _PAD)


def _frame(title: str, x_label: str, y_label: str, body: list[str]) -> str:
    axes = [f'<line x1="{_x(0)}" y1="{_y(0)}" x2="{_x(1)}" y2="{_y(0)}" stroke="black"/>',
            f'<line x1="{_x(0)}" y1="{_y(0)}" x2="{_x(0)}" y2="{_y(1)}" stroke="black"/>']
    for tick in (0.0, 0.5, 1.0):
        axes.append(f'<text x="{_x(tick)}" y="{_y(0) + 16}" text-anchor="middle" '
                    f'font-size="11">{tick:g}</text>')
    labels = [f'<text x="{_SIZE / 2}" y="20" text-anchor="middle" font-size="14">'
              f"{escape(title)}</text>",
              f'<text x="{_SIZE / 2}" y="{_SIZE - 12}" text-anchor="middle" '
              f'font-size="12">{escape(x_label)}</text>',
              f'<text x="14" y="{_SIZE / 2}" text-anchor="middle" font-size="12" '
              f'transform="rotate(-90 14 {_SIZE / 2})">{escape(y_label)}</text>']
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_SIZE}" height="{_SIZE}" '
            f'viewBox="0 0 {_SIZE} {_SIZE}"><rect width="100%" height="100%" fill="white"/>'
            + "".join(axes + labels + body) + "</svg>\n")


def scatter_svg(comparison: Comparison) -> str:
    body = [f'<line x1="{_x(0)}" y1="{_y(0)}" x2="{_x(1)}" y2="{_y(1)}" stroke="#999" '
            'stroke-dasharray="4 4"/>']
    for pair in comparison.pairs:
        body.append(f'<circle cx="{_x(pair.a):.1f}" cy="{_y(pair.b):.1f}" r="3" '
                    f'fill="{_COLOURS[0]}" fill-opacity="0.6"><title>{escape(pair.name)}: '
                    f"A {pair.a:.3f}, B {pair.b:.3f}</title></circle>")
    return _frame("word F1 per document", "A", "B", body)


def histogram_svg(comparison: Comparison) -> str:
    if comparison.with_reference:
        series = [("A", [p.a for p in comparison.pairs]), ("B", [p.b for p in comparison.pairs])]
        title = "word F1 per document"
    else:
        series = [("A vs B", [p.a for p in comparison.pairs])]
        title = "agreement of A and B per document"
    counts = [_bin(values) for _, values in series]
    tallest = max((max(c) for c in counts if c), default=1) or 1
    width = (_x(1) - _x(0)) / _BINS / len(series)
    body = []
    for index, ((name, _), bins) in enumerate(zip(series, counts, strict=True)):
        for b, count in enumerate(bins):
            if count:
                height = count / tallest * (_y(0) - _y(1))
                left = _x(b / _BINS) + index * width
                body.append(f'<rect x="{left:.1f}" y="{_y(0) - height:.1f}" '
                            f'width="{width:.1f}" height="{height:.1f}" '
                            f'fill="{_COLOURS[index]}"><title>{escape(name)}: {count}'
                            "</title></rect>")
        body.append(f'<text x="{_x(0) + 8}" y="{_y(1) + 14 * index}" font-size="12" '
                    f'fill="{_COLOURS[index]}">{escape(name)}</text>')
    return _frame(title, "F1", f"documents (tallest bar {tallest})", body)


def _bin(values: list[float]) -> list[int]:
    bins = [0] * _BINS
    for value in values:
        bins[min(_BINS - 1, max(0, int(value * _BINS)))] += 1
    return bins
