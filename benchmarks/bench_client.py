"""What one client process costs per page (issue #24): CPU of the whole client, CPU of
the event-loop thread, and event-loop lag, against a server streaming one token per
event as vLLM does by default (and N per event, as with ``--stream-interval N``).

Targets: event-loop thread <= 8 ms of CPU per page, the whole client (worker
processes included) <= 30 ms per page, loop lag p99 <= 10 ms; 240 one-page scanned
PDFs at ``concurrency=64``.

The simulator runs in its own process (the RTX 5090 profile at field speed), the
client in a fresh process per run. Lag is measured by a task that asks to sleep 5 ms
and records how late it wakes.

    python benchmarks/bench_client.py [--pages 240] [--concurrency 64] [--intervals 1,16]
        [--render-workers N] [--loop uvloop] [--server batching]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import resource
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from batching_server import launched
from bench_throughput import PageSet

TICK = 0.005


def serve(conn: Connection, speed: float, interval: int) -> None:
    from ovisocr_loader.testing import Simulator

    sim = Simulator.for_gpu("rtx5090", speed=speed, stream_interval=interval).start()
    conn.send(sim.base_url)
    conn.recv()
    sim.stop()
    conn.send("stopped")


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def run_client(queue: Any, base_url: str, files: list[str], concurrency: int,
               render_workers: int, loop: str) -> None:
    from ovisocr_loader import OvisParser
    from ovisocr_loader.bench import LagMonitor

    async def work() -> dict[str, Any]:
        parser = OvisParser(base_url=base_url, concurrency=concurrency,
                            render_workers=render_workers, cache_dir=False)
        await parser.acheck()
        lag = LagMonitor(TICK)
        lag.start()
        loop_cpu = time.thread_time()
        cpu = _cpu(resource.RUSAGE_SELF) + _cpu(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        pages = failed = 0
        async for doc in parser.aparse_many(files):
            pages += len(doc.pages)
            failed += len(doc.failed_pages) + (doc.error is not None)
        wall = time.perf_counter() - start   # the session has closed: workers are reaped
        loop_cpu = time.thread_time() - loop_cpu
        cpu = _cpu(resource.RUSAGE_SELF) + _cpu(resource.RUSAGE_CHILDREN) - cpu
        await lag.stop()
        return {"pages": pages, "failed": failed, "wall": wall, "cpu": cpu,
                "loop_cpu": loop_cpu, "lag_p99": lag.percentile(0.99),
                "lag_max": max(lag.samples), "lag_median": lag.percentile(0.5)}

    if loop == "uvloop":
        import uvloop

        uvloop.install()
    queue.put(asyncio.run(work()))


@contextmanager
def simulator(speed: float, interval: int) -> Iterator[str]:
    """The package's simulator in a child process; its base URL."""
    ctx = mp.get_context("spawn")
    conn, child = ctx.Pipe()
    server = ctx.Process(target=serve, args=(child, speed, interval), daemon=True)
    server.start()
    try:
        yield conn.recv()
    finally:
        conn.send("stop")
        conn.recv()
        server.join(10)


def measure(interval: int, files: list[str], args: argparse.Namespace) -> dict[str, Any]:
    server = simulator(args.speed, interval) if args.server == "simulator" else launched(
        "--profile", "rtx5090", "--tokens", "300-800", "--stream-interval", str(interval),
        "--speed", str(args.speed))
    with server as base_url:
        ctx = mp.get_context("spawn")
        queue = ctx.Queue()
        client = ctx.Process(target=run_client, args=(queue, base_url, files, args.concurrency,
                                                      args.render_workers, args.loop))
        client.start()
        result: dict[str, Any] = queue.get(timeout=1800)
        client.join(60)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=240)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--intervals", default="1,16", help="tokens per event to measure")
    ap.add_argument("--speed", type=float, default=1.0)
    ap.add_argument("--server", choices=("simulator", "batching"), default="simulator",
                    help="the package's simulator, or benchmarks/batching_server.py (paced "
                         "as vLLM: decode steps, 300-800 tokens a page)")
    ap.add_argument("--render-workers", type=int, default=0,
                    help="render processes (their CPU is counted as the client's)")
    ap.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio",
                    help="the client's event loop (uvloop: pip install uvloop)")
    args = ap.parse_args()
    print("| tokens per event | pages | pages/min | client CPU ms/page | event-loop thread "
          "CPU ms/page | loop lag median / p99 / max ms |")
    print("| --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for interval in (int(v) for v in args.intervals.split(",")):
            files = sorted(str(p) for p in PageSet(args.pages, 0.005).write_files(
                Path(tmp) / f"i{interval}").glob("*.pdf"))
            r = measure(interval, files, args)
            pages = max(1, r["pages"])
            print(f"| {interval} | {r['pages']} ({r['failed']} failed) | "
                  f"{r['pages'] / r['wall'] * 60:.0f} | {r['cpu'] / pages * 1000:.1f} | "
                  f"{r['loop_cpu'] / pages * 1000:.1f} | {r['lag_median'] * 1000:.1f} / "
                  f"{r['lag_p99'] * 1000:.1f} / {r['lag_max'] * 1000:.1f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
