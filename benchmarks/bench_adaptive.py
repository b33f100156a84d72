"""Default settings (concurrency="auto") against a sweep of fixed limits, per GPU profile.

For each GPU profile, one run with the defaults and one per fixed limit, each on
its own never-repeated pages; prints pages/min and the ratio of the default to
the best fixed limit. Then two parsers with default settings share one server
(the second starts later) and their total and shares during the overlap are
compared with the best fixed limit.

Two servers: the package's simulator (``--server simulator``: the throughput
curves the controller was tuned on) and ``benchmarks/batching_server.py``
(``--server batching``: an independent model, decode steps of continuous batching,
KV growing per token, preemption and queueing; it shares no code with the first).

    python benchmarks/bench_adaptive.py                       # simulator, all profiles
    python benchmarks/bench_adaptive.py --server batching     # the independent server
    python benchmarks/bench_adaptive.py --profiles small --seconds 30
"""

from __future__ import annotations

import argparse
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from batching_server import launched

from ovisocr_loader import OvisParser
from ovisocr_loader.jobs import PageFinished, ProgressEvent
from ovisocr_loader.testing import GPU_PROFILES, Simulator, marked_pdf

TOKENS = 100
#: the batching server's answer lengths (``--tokens``; a list so that main can set it)
TOKEN_RANGE = ["150-450"]


@dataclass(frozen=True)
class Profile:
    """One GPU of one server: the fixed limits swept, the speed that keeps the server
    (not this machine's CPU) the bottleneck, and about its best rate (sizes the runs)."""

    server: str
    name: str
    sweep: tuple[int, ...]
    speed: float
    best_per_minute: float


PROFILES: dict[str, dict[str, Profile]] = {
    "simulator": {name: Profile("simulator", name, sweep, speed,
                                max(rate for _, rate in GPU_PROFILES[name].table) * speed)
                  for name, sweep, speed in (("small", (8, 12, 16, 32), 1.0),
                                             ("rtx5090", (16, 32, 48, 64), 1.0),
                                             ("large", (64, 128, 192), 0.5))},
    "batching": {name: Profile("batching", name, sweep, 1.0, best)
                 for name, sweep, best in (("small", (8, 12, 16, 20, 24, 32), 120.0),
                                           ("big", (64, 96, 128), 656.0),
                                           ("big-kv", (96, 128, 160, 192), 718.0),
                                           ("rtx5090", (16, 24, 32, 40, 48), 530.0))},
}
SHARED = {"simulator": "rtx5090", "batching": "big-kv"}


@contextmanager
def serving(profile: Profile) -> Iterator[str]:
    """A fresh server for ``profile``; its base URL."""
    if profile.server == "simulator":
        with Simulator.for_gpu(profile.name, speed=profile.speed,
                               tokens_per_page=TOKENS) as sim:
            yield sim.base_url
        return
    with launched("--profile", profile.name, "--speed", str(profile.speed),
                  "--tokens", TOKEN_RANGE[0]) as url:
        yield url


@dataclass
class Run:
    label: str
    pages: int
    seconds: float

    @property
    def per_minute(self) -> float:
        return self.pages / self.seconds * 60


def schedule(profile: Profile, auto_runs: int) -> list[int | str]:
    """The fixed limits with the default runs spread among them, so that the
    machine's drift over the minutes touches both alike."""
    order: list[int | str] = list(profile.sweep)
    step = max(1, len(order) // max(1, auto_runs))
    for n in range(auto_runs):
        order.insert(min(len(order), n * (step + 1)), "auto")
    return order


def pages_for(profile: Profile, seconds: float) -> int:
    """About ``seconds`` of work at the profile's best throughput."""
    return max(60, int(profile.best_per_minute * seconds / 60))


def one_run(profile: Profile, concurrency: int | str, pages: int) -> Run:
    pdf, _ = marked_pdf(pages)
    with serving(profile) as url:
        started = time.monotonic()
        doc = OvisParser(base_url=url, concurrency=concurrency, cache_dir=False).parse(pdf)  # type: ignore[arg-type]
        elapsed = time.monotonic() - started
    assert all(p.ok for p in doc.pages), "a page failed"
    return Run(str(concurrency), pages, elapsed)


def shared_run(profile: Profile, pages: int, delay: float) -> tuple[float, float, float]:
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
        OvisParser(base_url=url, cache_dir=False).parse(pdfs[index], on_event=note)
        ends[index] = time.monotonic()

    with serving(profile) as url:
        threads = [threading.Thread(target=work, args=(i, url)) for i in (0, 1)]
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
    args.add_argument("--server", choices=sorted(PROFILES), default="simulator")
    args.add_argument("--profiles", help="comma-separated (default: all of the server's)")
    args.add_argument("--seconds", type=float, default=60.0, help="work per run at the best rate")
    args.add_argument("--no-shared", action="store_true", help="skip the two-parser run")
    args.add_argument("--auto-runs", type=int, default=1,
                      help="runs with the defaults per profile (their spread is printed)")
    args.add_argument("--tokens", default="150-450",
                      help="the batching server's answer lengths (300-800: the field's pages)")
    opts = args.parse_args()
    TOKEN_RANGE[0] = opts.tokens
    logging.basicConfig(level=logging.WARNING)
    profiles = PROFILES[opts.server]
    best_fixed: dict[str, float] = {}
    for name in (opts.profiles.split(",") if opts.profiles else profiles):
        profile = profiles[name]
        pages = pages_for(profile, opts.seconds)
        runs = [one_run(profile, limit, pages) for limit in schedule(profile, opts.auto_runs)]
        best = max(r.per_minute for r in runs if r.label != "auto")
        best_fixed[name] = best
        print(f"{opts.server} {name} ({pages} pages, speed {profile.speed:g}):", flush=True)
        for run in runs:
            print(f"  concurrency {run.label:>5}: {run.per_minute:7.0f} pages/min"
                  f"  ({run.per_minute / best:.2f} of the best fixed)", flush=True)
        autos = sorted(r.per_minute / best for r in runs if r.label == "auto")
        if len(autos) > 1:
            print(f"  defaults over {len(autos)} runs: {autos[0]:.2f} / "
                  f"{autos[len(autos) // 2]:.2f} / {autos[-1]:.2f} of the best fixed "
                  "(min / median / max)", flush=True)
    shared = SHARED[opts.server]
    if not opts.no_shared and shared in best_fixed:
        profile = profiles[shared]
        total, share_a, share_b = shared_run(profile, pages_for(profile, opts.seconds),
                                             delay=10.0)
        print(f"two default parsers on one {opts.server} {shared} (the second 10 s later): "
              f"{total:.0f} pages/min together ({total / best_fixed[shared]:.2f} of the best "
              f"fixed), shares {share_a:.0%} / {share_b:.0%}")


if __name__ == "__main__":
    main()
