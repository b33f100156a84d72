"""Render + encode cost per page: ms/page and KiB/page per encoding.

Target (issue #2): <= 20 ms median per dense text Letter page at 150 DPI on the
2-core reference machine, render and encode together.

    python benchmarks/bench_render.py [--pages 20] [--repeat 3]
"""

from __future__ import annotations

import argparse
import io
import random
import statistics
import time

from reportlab.lib.pagesizes import letter
from reportlab.pdfgen import canvas

from ovisocr_loader.config import RenderSettings
from ovisocr_loader.sources import load_input, open_source
from ovisocr_loader.sources.encode import is_blank
from ovisocr_loader.sources.png import encode_png

WORDS = ("the patient results were within the reference range except for the measured "
         "values listed in table two and discussed with the attending physician").split()


def dense_letter_pdf(pages: int) -> bytes:
    """Pages of 9 pt text, 64 lines each: a dense typed Letter page."""
    rng = random.Random(0)
    buffer = io.BytesIO()
    c = canvas.Canvas(buffer, pagesize=letter)
    for _ in range(pages):
        c.setFont("Helvetica", 9)
        for line in range(64):
            c.drawString(40, 750 - line * 11, " ".join(rng.choice(WORDS) for _ in range(17)))
        c.showPage()
    c.save()
    return buffer.getvalue()


def pillow_png(level: int):
    def encode(image) -> bytes:
        out = io.BytesIO()
        image.save(out, format="PNG", compress_level=level)
        return out.getvalue()
    return encode


ENCODINGS = {
    "png filter0 zlib-ng 2 (ours)": lambda image: encode_png(image, 2),
    "pillow png level 1": pillow_png(1),
    "pillow png level 6": pillow_png(6),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--pages", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    settings = RenderSettings()
    source = open_source(load_input(dense_letter_pdf(args.pages), name="dense.pdf"), settings)
    print(f"{args.pages} dense Letter pages at {settings.dpi:g} DPI, "
          f"median of {args.repeat} runs per page")
    print(f"{'encoding':<28}{'render ms':>10}{'encode ms':>10}{'total ms':>10}{'KiB/page':>10}")
    for label, encode in ENCODINGS.items():
        renders, encodes, totals, sizes = [], [], [], []
        for number in source.page_numbers:
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                image = source.render(number).image
                t1 = time.perf_counter()
                is_blank(image.histogram(), image.width * image.height)
                data = encode(image)
                t2 = time.perf_counter()
                renders.append(t1 - t0)
                encodes.append(t2 - t1)
                totals.append(t2 - t0)
                sizes.append(len(data))
        print(f"{label:<28}{statistics.median(renders) * 1e3:>10.1f}"
              f"{statistics.median(encodes) * 1e3:>10.1f}{statistics.median(totals) * 1e3:>10.1f}"
              f"{statistics.median(sizes) / 1024:>10.0f}")
    print(f"image: {image.width}x{image.height} {image.mode}")


if __name__ == "__main__":
    main()
