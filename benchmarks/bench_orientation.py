"""What ``orientation="auto"`` costs per page, and whether it turns pages right.

Renders ``--pages`` generated prose pages, each stored upright and turned 90, 180
and 270 degrees clockwise (a PDF page per image, 150 DPI), through the same
``render_page`` the pipeline uses, with orientation off and auto. Prints the
median ms/page of both, the difference, and how many turned pages reached the
encoder upright (and upright ones untouched).

    python benchmarks/bench_orientation.py --pages 10
"""

from __future__ import annotations

import argparse
import statistics
import time

from ovisocr_loader.config import RenderSettings
from ovisocr_loader.sources import load_input, open_source
from ovisocr_loader.sources.orientation import content_turn
from ovisocr_loader.sources.render import render_page
from ovisocr_loader.testing import make_pdf, text_page, turned


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("--pages", type=int, default=10, help="prose pages (x4 turns)")
    opts = args.parse_args()
    turns = [0, 90, 180, 270] * opts.pages
    images = [turned(text_page(seed=n // 4), turn) for n, turn in enumerate(turns)]
    source = open_source(load_input(make_pdf(images)), RenderSettings())
    content_turn(images[0])   # load the classifier outside the timing (about 0.1 s once)
    timings: dict[str, list[float]] = {"off": [], "auto": []}
    right = 0
    for number, turn in enumerate(turns, start=1):
        for mode in ("off", "auto"):
            started = time.perf_counter()
            page = render_page(source, number, RenderSettings(orientation=mode))
            timings[mode].append((time.perf_counter() - started) * 1000)
        right += page.rotation == (360 - turn) % 360
    off, auto = (statistics.median(timings[m]) for m in ("off", "auto"))
    print(f"{len(turns)} pages: render+encode {off:.1f} ms/page off, {auto:.1f} ms/page "
          f"auto (+{auto - off:.1f} ms); turned right {right}/{len(turns)}")


if __name__ == "__main__":
    main()
