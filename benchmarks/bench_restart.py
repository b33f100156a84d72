"""A server restart in the middle of a run, with default settings.

The simulated server (RTX 5090 latency profile) goes away after ``--after`` pages
have finished and comes back on the same port ``--down`` seconds later, as a
vLLM restart would. Prints how many pages ended with content or with an error,
and how long the run took.

    python benchmarks/bench_restart.py --pages 160 --after 40 --down 45
"""

from __future__ import annotations

import argparse
import threading
import time

from ovisocr_loader import OvisParser
from ovisocr_loader.testing import LatencyModel, Simulator, marked_pdf


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("--pages", type=int, default=160)
    args.add_argument("--after", type=int, default=40, help="pages finished before the stop")
    args.add_argument("--down", type=float, default=45.0, help="seconds the server is away")
    opts = args.parse_args()
    pdf, _ = marked_pdf(opts.pages)
    with Simulator(latency=LatencyModel(speed=1.0)) as sim:   # the field RTX 5090 profile
        def restart() -> None:
            Simulator.wait_until(lambda: sum(r.finish_reason == "stop"
                                             for r in sim.completions()) >= opts.after, 600)
            sim.stop()
            time.sleep(opts.down)
            sim.start()

        threading.Thread(target=restart, daemon=True).start()
        started = time.monotonic()
        doc = OvisParser(base_url=sim.base_url, cache_dir=False).parse(pdf)
        elapsed = time.monotonic() - started
    content = sum(1 for p in doc.pages if p.ok and p.markdown)
    errors = [p for p in doc.pages if p.error is not None]
    print(f"{opts.pages} pages, server away for {opts.down:g}s after {opts.after}: "
          f"{content} with content, {len(errors)} errors, {elapsed:.1f}s in all")
    for page in errors[:5]:
        print(f"  page {page.page_number}: {page.error.kind}: {page.error.message}")


if __name__ == "__main__":
    main()
