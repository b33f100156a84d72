"""Default settings (concurrency="auto") against a sweep of fixed limits, per GPU profile.

For each simulated GPU profile (capacity curve, max_num_seqs, KV cache), one run
with the defaults and one per fixed limit, each on its own never-repeated pages;
prints pages/min and the ratio of the default to the best fixed limit. Then two
parsers with default settings share one server (the second starts later) and
their total and shares during the overlap are compared with the best fixed limit.

    python benchmarks/bench_adaptive.py                  # all profiles (about 15 min)
    python benchmarks/bench_adaptive.py --profiles small --seconds 30
"""

from __future__ import annotations

import argparse
import logging
import threading
import time
from dataclasses import dataclass

from ovisocr_loader import OvisParser
from ovisocr_loader.jobs import PageFinished, ProgressEvent
from ovisocr_loader.testing import GPU_PROFILES, Simulator, marked_pdf

#: Fixed limits swept per profile, and the simulator speed that keeps the server,
#: not this 2-core machine's CPU, the bottleneck.
SWEEPS = {"small": (8, 12, 16, 32), "rtx5090": (16, 32, 48, 64), "large": (64, 128, 192)}
SPEED = {"small": 1.0, "rtx5090": 1.0, "large": 0.5}
TOKENS = 100


@dataclass
class Run:
    label: str
    pages: int
    seconds: float

    @property
    def per_minute(self) -> float:
        return self.pages / self.seconds * 60


def pages_for(profile: str, seconds: float) -> int:
    """About ``seconds`` of work at the profile's best throughput."""
    best = max(rate for _, rate in GPU_PROFILES[profile].table) * SPEED[profile]
    return max(60, int(best * seconds / 60))


def one_run(profile: str, concurrency: int | str, pages: int) -> Run:
    pdf, _ = marked_pdf(pages)
    with Simulator.for_gpu(profile, speed=SPEED[profile], tokens_per_page=TOKENS) as sim:
        started = time.monotonic()
        doc = OvisParser(base_url=sim.base_url, concurrency=concurrency).parse(pdf)  # type: ignore[arg-type]
        elapsed = time.monotonic() - started
    assert all(p.ok for p in doc.pages), "a page failed"
    return Run(str(concurrency), pages, elapsed)


def shared_run(profile: str, pages: int, delay: float) -> tuple[float, float, float]:
    """Two default parsers on one server: (total pages/min, share of A, share of B)
    counted while both were running."""
    pdfs = [marked_pdf(pages)[0], marked_pdf(pages)[0]]
    finished: list[list[float]] = [[], []]
    ends = [0.0, 0.0]
    starts = [0.0, 0.0]

    def work(index: int, url: str) -> None:
        def note(event: ProgressEvent) -> None:
            if isinstance(event, PageFinished):
                finished[index].append(time.monotonic())
        time.sleep(delay * index)
        starts[index] = time.monotonic()
        OvisParser(base_url=url).parse(pdfs[index], on_event=note)
        ends[index] = time.monotonic()

    with Simulator.for_gpu(profile, speed=SPEED[profile], tokens_per_page=TOKENS) as sim:
        threads = [threading.Thread(target=work, args=(i, sim.base_url)) for i in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    low, high = max(starts) + 10.0, min(ends)   # both running, the second past its start
    counts = [sum(low <= t <= high for t in times) for times in finished]
    total = sum(counts)
    return total / max(1e-9, high - low) * 60, counts[0] / max(1, total), counts[1] / max(
        1, total)


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("--profiles", default="small,rtx5090,large")
    args.add_argument("--seconds", type=float, default=60.0, help="work per run at the best rate")
    args.add_argument("--no-shared", action="store_true", help="skip the two-parser run")
    opts = args.parse_args()
    logging.basicConfig(level=logging.WARNING)
    best_fixed: dict[str, float] = {}
    for profile in opts.profiles.split(","):
        pages = pages_for(profile, opts.seconds)
        runs = [one_run(profile, "auto", pages)]
        runs += [one_run(profile, limit, pages) for limit in SWEEPS[profile]]
        best = max(r.per_minute for r in runs[1:])
        best_fixed[profile] = best
        print(f"{profile} ({pages} pages, simulator speed {SPEED[profile]:g}):")
        for run in runs:
            print(f"  concurrency {run.label:>5}: {run.per_minute:7.0f} pages/min"
                  f"  ({run.per_minute / best:.2f} of the best fixed)")
    if not opts.no_shared and "rtx5090" in best_fixed:
        pages = pages_for("rtx5090", opts.seconds)
        total, share_a, share_b = shared_run("rtx5090", pages, delay=10.0)
        print(f"two default parsers on one rtx5090 (the second 10 s later): {total:.0f} "
              f"pages/min together ({total / best_fixed['rtx5090']:.2f} of the best fixed), "
              f"shares {share_a:.0%} / {share_b:.0%}")


if __name__ == "__main__":
    main()
