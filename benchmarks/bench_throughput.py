"""Throughput, tail latency and memory of the loader against the simulator.

For each scenario the loader runs against an *ideal client* in the same run: the
same request recipe (``PageClient``: guard, retries) over images pre-rendered in
memory before the clock starts, through a plain semaphore, with no rendering, no
documents and no framework. Their ratio is what our pipeline costs. Every run
uses its own freshly generated unique pages; 0.5% of them loop (under greedy
decoding) as OvisOCR2 does.

Scenarios (issue #7): (a) one 300-page PDF through ``OvisParser``; (b) 200
one-page files through ``SimpleDirectoryReader(...).aload_data()`` with
``OvisReader``; (c) the same through ``OvisLoader.alazy_load()``; then peak
RSS while parsing a 1000-page PDF, and two endpoints against one.

The simulator runs in its own process (so client CPU is measured alone), each
client run in a fresh process (so peak RSS is its own). Per-page latency is
taken from the simulator's record: first request start to last request end.

    python benchmarks/bench_throughput.py [--speed 1] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import multiprocessing as mp
import random
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

WORDS = ("harbour vessel tonnage quay basin pilot customs manifest cargo berth tide crane "
         "ledger invoice schedule inspection dredging anchor freight clearance").split()
LOOP_KINDS = ("digits", "o", "emoji")


# -- the simulator process --------------------------------------------------------------------

def serve(conn: Connection, speed: float) -> None:
    """Run one simulator; answer control messages until told to stop."""
    from ovisocr_loader.testing import LatencyModel, Simulator, synthetic_markdown

    sim = Simulator(latency=LatencyModel(speed=speed)).start()
    conn.send(sim.base_url)
    while True:
        message = conn.recv()
        if message[0] == "loop":
            for pid, kind in message[1]:
                sim.register(pid, synthetic_markdown(str(pid).encode()), loop=kind,
                             loop_after=300)
            conn.send("ok")
        elif message[0] == "spans":
            spans: dict[int, list[float]] = {}
            for record in sim.completions():
                if record.page_id is None or record.end is None:
                    continue
                span = spans.setdefault(record.page_id, [record.start, record.end])
                span[0], span[1] = min(span[0], record.start), max(span[1], record.end)
            conn.send({pid: end - start for pid, (start, end) in spans.items()})
            sim.reset_records()
        else:
            sim.stop()
            conn.send("stopped")
            return


class Server:
    """A simulator in a child process, with its control pipe."""

    def __init__(self, speed: float) -> None:
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=serve, args=(child, speed), daemon=True)
        self.process.start()
        self.base_url: str = self.conn.recv()

    def loop_pages(self, loops: list[tuple[int, str]]) -> None:
        self.conn.send(("loop", loops))
        self.conn.recv()

    def spans(self) -> dict[int, float]:
        self.conn.send(("spans",))
        return dict(self.conn.recv())

    def stop(self) -> None:
        self.conn.send(("stop",))
        self.conn.recv()
        self.process.join(10)


# -- inputs ----------------------------------------------------------------------------------

class PageSet:
    """Fresh unique pages; ``loops`` of them loop under greedy decoding."""

    def __init__(self, count: int, loop_rate: float) -> None:
        from ovisocr_loader.testing import next_page_id

        self.ids = [next_page_id() for _ in range(count)]
        rng = random.Random(self.ids[0])
        looping = rng.sample(self.ids, max(1, math.ceil(count * loop_rate)))
        self.loops = [(pid, LOOP_KINDS[n % len(LOOP_KINDS)]) for n, pid in enumerate(looping)]

    def images(self) -> Any:
        from ovisocr_loader.testing import page_image

        for pid in self.ids:
            rng = random.Random(pid)
            lines = [" ".join(rng.choice(WORDS) for _ in range(9)) for _ in range(32)]
            yield page_image(pid, lines=lines)

    def write_pdf(self, path: Path) -> Path:
        from ovisocr_loader.testing import write_pdf

        with path.open("wb") as out:
            write_pdf(out, self.images())
        return path

    def write_files(self, folder: Path) -> Path:
        from ovisocr_loader.testing import write_pdf

        folder.mkdir(parents=True)
        for n, image in enumerate(self.images()):
            with (folder / f"fax{n:04}.pdf").open("wb") as out:
                write_pdf(out, [image])
        return folder


# -- client runs (each in a fresh process) ----------------------------------------------------

def _measure(queue: Any, work: Callable[[], int]) -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu0 = usage.ru_utime + usage.ru_stime
    start = time.perf_counter()
    pages = work()
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    queue.put({"pages": pages, "wall": wall, "cpu": usage.ru_utime + usage.ru_stime - cpu0,
               "rss_mb": usage.ru_maxrss / 1024})


def run_ideal(queue: Any, base_url: str, inputs: list[str], concurrency: int) -> None:
    """Pre-render every page, then send them through a plain semaphore (same recipe)."""
    from ovisocr_loader.client.endpoints import EndpointPool
    from ovisocr_loader.client.page_client import PageClient
    from ovisocr_loader.client.request import RequestRecipe
    from ovisocr_loader.client.transport import Transport
    from ovisocr_loader.config import GuardPolicy, RenderSettings, RetryPolicy, Timeouts
    from ovisocr_loader.sources import load_input, open_source
    from ovisocr_loader.sources.render import render_page

    settings = RenderSettings()
    pngs = []
    for item in inputs:
        source = open_source(load_input(item), settings)
        pngs += [render_page(source, n, settings).data_url for n in source.page_numbers]
        source.close()

    async def send_all() -> int:
        pool = EndpointPool([Transport(base_url, None, Timeouts())])
        models = await pool.probe()
        client = PageClient(pool, RequestRecipe(models[0], GuardPolicy()), RetryPolicy())
        limit = asyncio.Semaphore(concurrency)

        async def one(data_url: bytes) -> None:
            async with limit:
                await client.run(data_url)

        await asyncio.gather(*(one(url) for url in pngs))
        await pool.aclose()
        return len(pngs)

    _measure(queue, lambda: asyncio.run(send_all()))


def run_parser(queue: Any, base_url: str | list[str], pdf: str, concurrency: int) -> None:
    from ovisocr_loader import OvisParser

    def work() -> int:
        doc = OvisParser(base_url=base_url, concurrency=concurrency,
                         cache_dir=False).parse(pdf)
        assert all(p.ok for p in doc.pages), "every page must succeed"
        return len(doc.pages)

    _measure(queue, work)


def run_reader(queue: Any, base_url: str, folder: str, concurrency: int) -> None:
    from llama_index.core import SimpleDirectoryReader

    from ovisocr_loader.llama_index import OvisReader

    def work() -> int:
        reader = OvisReader(base_url=base_url, concurrency=concurrency, cache_dir=False)
        docs = asyncio.run(SimpleDirectoryReader(folder, file_extractor={".pdf": reader}
                                                 ).aload_data())
        assert all(d.text for d in docs)
        return len(docs)

    _measure(queue, work)


def run_loader(queue: Any, base_url: str, folder: str, concurrency: int) -> None:
    from ovisocr_loader.langchain import OvisLoader

    async def consume() -> int:
        loader = OvisLoader(folder, base_url=base_url, concurrency=concurrency, cache_dir=False)
        return sum([1 async for doc in loader.alazy_load() if doc.page_content])

    _measure(queue, lambda: asyncio.run(consume()))


def in_child(target: Callable[..., None], *args: Any) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    process = ctx.Process(target=target, args=(queue, *args))
    process.start()
    result: dict[str, Any] = queue.get()
    process.join()
    return result


# -- the report ------------------------------------------------------------------------------

def tail(spans: dict[int, float], pages: PageSet) -> tuple[float, float]:
    """Median page latency and the worst non-looping page as a multiple of it."""
    looping = {pid for pid, _ in pages.loops}
    median = statistics.median(spans.values())
    worst = max(v for pid, v in spans.items() if pid not in looping)
    return median, worst / median


def row(name: str, result: dict[str, Any], ideal: dict[str, Any] | None,
        latency: tuple[float, float]) -> str:
    rate = result["pages"] / result["wall"] * 60
    ratio = f"{rate / (ideal['pages'] / ideal['wall'] * 60):.1%}" if ideal else "-"
    return (f"| {name} | {result['pages']} | {rate:.0f} | {ratio} | "
            f"{result['cpu'] / result['pages'] * 1000:.1f} | {result['rss_mb']:.0f} | "
            f"{latency[0]:.2f} | {latency[1]:.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--speed", type=float, default=1.0, help="simulator speed (1 = field)")
    ap.add_argument("--concurrency", type=lambda v: v if v == "auto" else int(v), default=32,
                    help="a fixed limit, or auto (the ideal client then uses 32)")
    ap.add_argument("--pdf-pages", type=int, default=300)
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--rss-pages", type=int, default=1000)
    ap.add_argument("--loop-rate", type=float, default=0.005)
    ap.add_argument("--skip", nargs="*", default=[], choices=("a", "b", "c", "rss", "two"))
    args = ap.parse_args()
    c = args.concurrency
    ideal_c = 32 if c == "auto" else c
    server = Server(args.speed)
    rows: list[str] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)

        def measured(name: str, target: Callable[..., None], pages: PageSet, *args: Any,
                     ideal: dict[str, Any] | None = None) -> dict[str, Any]:
            server.loop_pages(pages.loops)
            result = in_child(target, *args)
            latency = tail(server.spans(), pages)
            rows.append(row(name, result, ideal, latency))
            print(rows[-1], flush=True)
            return result

        def pdf_pair(tag: str, count: int) -> tuple[PageSet, Path, PageSet, Path]:
            ideal_set, loader_set = PageSet(count, args.loop_rate), PageSet(count,
                                                                             args.loop_rate)
            return (ideal_set, ideal_set.write_pdf(root / f"ideal-{tag}.pdf"), loader_set,
                    loader_set.write_pdf(root / f"loader-{tag}.pdf"))

        print("| run | pages | pages/min | vs ideal | client CPU ms/page | peak RSS MB | "
              "median page s | worst non-looping page / median |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        if "a" not in args.skip:
            ideal_set, ideal_pdf, loader_set, loader_pdf = pdf_pair("a", args.pdf_pages)
            ideal = measured("(a) ideal client, 1 PDF", run_ideal, ideal_set, server.base_url,
                             [str(ideal_pdf)], ideal_c)
            measured("(a) OvisParser, 1 PDF", run_parser, loader_set, server.base_url,
                     str(loader_pdf), c, ideal=ideal)
        for scenario, target, label in (("b", run_reader, "SimpleDirectoryReader.aload_data"),
                                        ("c", run_loader, "OvisLoader.alazy_load")):
            if scenario in args.skip:
                continue
            ideal_set, loader_set = PageSet(args.files, args.loop_rate), PageSet(
                args.files, args.loop_rate)
            ideal_dir = ideal_set.write_files(root / f"ideal-{scenario}")
            loader_dir = loader_set.write_files(root / f"loader-{scenario}")
            ideal = measured(f"({scenario}) ideal client, {args.files} files", run_ideal,
                             ideal_set, server.base_url,
                             sorted(str(p) for p in ideal_dir.iterdir()), ideal_c)
            measured(f"({scenario}) {label}", target, loader_set, server.base_url,
                     str(loader_dir), c, ideal=ideal)
        if "rss" not in args.skip:
            pages = PageSet(args.rss_pages, args.loop_rate)
            big = pages.write_pdf(root / "big.pdf")
            notes.append(f"{args.rss_pages}-page PDF: {big.stat().st_size / 2**20:.0f} MB")
            measured(f"OvisParser, {args.rss_pages}-page PDF", run_parser, pages,
                     server.base_url, str(big), c)
        if "two" not in args.skip:
            second = Server(args.speed)
            try:
                one_set, two_set = PageSet(args.pdf_pages, 0), PageSet(args.pdf_pages, 0)
                one = measured(f"1 endpoint, concurrency {c}", run_parser, one_set,
                               server.base_url, str(one_set.write_pdf(root / "one.pdf")), c)
                second.spans()
                two_pdf = two_set.write_pdf(root / "two.pdf")
                server.loop_pages([])
                both = 2 * ideal_c if c != "auto" else "auto"
                two = in_child(run_parser, [server.base_url, second.base_url], str(two_pdf),
                               both)
                server.spans()
                second.spans()
                speedup = (two["pages"] / two["wall"]) / (one["pages"] / one["wall"])
                rows.append(f"| 2 endpoints, concurrency {both} | {two['pages']} | "
                            f"{two['pages'] / two['wall'] * 60:.0f} | {speedup:.2f}x of 1 "
                            f"endpoint | {two['cpu'] / two['pages'] * 1000:.1f} | "
                            f"{two['rss_mb']:.0f} | - | - |")
                print(rows[-1], flush=True)
            finally:
                second.stop()
    server.stop()
    print(f"\nsimulator speed {args.speed:g}x, concurrency {c}, loop rate {args.loop_rate:.1%}"
          f", python {sys.version.split()[0]}; " + "; ".join(notes))


if __name__ == "__main__":
    main()
