"""Ray Data against one process, on the same machine and the same kind of files.

Writes two folders of ``--files`` scans holding ``--pages`` pages (one long PDF,
three broken files, every 9th page's first request failing), each with fresh
pages, served by one simulated RTX 5090 (field latency x ``--speed``). Parses
one with ``OvisParser.parse_many`` and the other with ``read_scans`` +
``write_parquet`` (``--workers`` actors on a local ``ray.init(num_cpus=2)``),
both at ``concurrency=32``, and prints pages/min, rows and the peak in flight.
Ray's start-up is outside the timing (a cluster is up, its Ray Data services
started by an earlier job, before a job runs); the job's own actors' start-up
is inside.

    python benchmarks/bench_ray.py --files 32 --pages 130
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import ray

from ovisocr_loader import OvisParser
from ovisocr_loader.ray import ROWS_PER_FILE, read_scans
from ovisocr_loader.testing import Simulator, scan_folder


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("--files", type=int, default=32)
    args.add_argument("--pages", type=int, default=130)
    args.add_argument("--workers", type=int, default=None,
                      help="Ray workers (default: read_scans' own, 1 on 2 CPUs)")
    args.add_argument("--repeat", type=int, default=1, help="runs of each, fresh pages each")
    args.add_argument("--speed", type=float, default=1.0)
    opts = args.parse_args()
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING,
             log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    ray.data.range(1).materialize()   # Ray Data's own services, as a running cluster has
    logging.getLogger("ovisocr_loader").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp, \
            Simulator.for_gpu("rtx5090", speed=opts.speed) as sim:
        for run in range(opts.repeat):
            root = Path(tmp) / str(run)
            local = _timed("one process", _one_process(root, sim, opts), sim)
            spread = _timed(f"ray, {opts.workers or 'default'} workers", _ray(root, sim, opts),
                            sim)
            rows = ray.data.read_parquet(str(root / "rows")).count()
            print(f"ray / one process: {spread / local:.2f} ({rows} rows written)")
    ray.shutdown()


def _one_process(root: Path, sim: Simulator, opts: argparse.Namespace) -> Callable[[], int]:
    folder = scan_folder(root / "local", sim, files=opts.files, pages=opts.pages)
    files = sorted(folder.pages) + folder.broken
    parser = OvisParser(base_url=sim.base_url, concurrency=32, cache_dir=False)
    return lambda: sum(len(doc.pages) for doc in parser.parse_many(files))


def _ray(root: Path, sim: Simulator, opts: argparse.Namespace) -> Callable[[], int]:
    folder = scan_folder(root / "ray", sim, files=opts.files, pages=opts.pages)

    def run() -> int:
        read_scans(folder.root, base_url=sim.base_url, concurrency=32, cache_dir=False,
                   workers=opts.workers).write_parquet(str(root / "rows"),
                                                       min_rows_per_file=ROWS_PER_FILE)
        return folder.page_count

    return run


def _timed(label: str, work: Callable[[], int], sim: Simulator) -> float:
    """Time one parse of files already written; prints and returns pages/min."""
    sim.reset_records()
    started = time.monotonic()
    pages = work()
    elapsed = time.monotonic() - started
    rate = pages / elapsed * 60
    print(f"{label:>22}: {pages} pages in {elapsed:5.1f} s = {rate:4.0f} pages/min; "
          f"peak in flight {sim.max_in_flight}")
    return rate


if __name__ == "__main__":
    main()
