"""The loader against an ideal client on a server that paces like vLLM (issue #52).

The server is ``benchmarks/batching_server.py`` (no code shared with the package's
simulator): decode steps advance every running request one token at a time, a
step's time grows with the batch, prefill costs time per image, and each token is
one server-sent event (``--stream-interval`` groups them). Its answers here are
300-800 tokens, as the field's normal pages.

The ideal client is what a user would write by hand: openai's ``AsyncOpenAI`` and
a plain semaphore over PNGs rendered before the clock starts, asking for whole
(unstreamed) answers, so it sees each page end the moment the server ends it.
Each run pairs it with the loader on fresh unique pages of the same size, one
after the other on the same server; as their answers differ in length, the ratio
is of tokens generated per second (the server's count), not of pages. ``--runs``
repeats the pairs and prints every ratio, so the spread is seen, not the best run.

Scenarios: (a) one PDF through ``OvisParser(concurrency=C).parse``; (b) one-page
files through ``SimpleDirectoryReader(...).aload_data()``; (c) the same through
``OvisLoader.alazy_load()``.

    python benchmarks/bench_vllm_paced.py [--profile rtx5090] [--runs 3]
        [--scenarios a b c] [--stream-interval 1] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from batching_server import launched
from bench_throughput import PageSet, _measure, in_child, run_loader, run_parser, run_reader


def run_openai(queue: Any, base_url: str, inputs: list[str], concurrency: int) -> None:
    """Render every page first, then send them through AsyncOpenAI and a semaphore."""
    from openai import AsyncOpenAI

    from ovisocr_loader.config import RenderSettings
    from ovisocr_loader.sources import load_input, open_source
    from ovisocr_loader.sources.render import render_page

    settings = RenderSettings()
    urls: list[str] = []
    for item in inputs:
        source = open_source(load_input(item), settings)
        urls += [render_page(source, n, settings).data_url.decode()
                 for n in source.page_numbers]
        source.close()

    async def send_all() -> int:
        client = AsyncOpenAI(base_url=base_url, api_key="EMPTY", max_retries=0, timeout=600)
        model = (await client.models.list()).data[0].id
        limit = asyncio.Semaphore(concurrency)

        async def one(url: str) -> None:
            async with limit:
                await client.chat.completions.create(
                    model=model, temperature=0, max_tokens=4096,
                    messages=[{"role": "user", "content": [
                        {"type": "image_url", "image_url": {"url": url}},
                        {"type": "text", "text": "parse"}]}])

        await asyncio.gather(*(one(url) for url in urls))
        await client.close()
        return len(urls)

    _measure(queue, lambda: asyncio.run(send_all()))


def held(url: str) -> dict[str, float]:
    """The mean requests the last run kept on the server (the server's own count), and
    the span from its first request's arrival to its last answer's end."""
    with urllib.request.urlopen(f"{url}/stats", timeout=10) as answer:
        return dict(json.load(answer))


def per_minute(result: dict[str, Any]) -> float:
    return float(result["pages"] / result["wall"] * 60)


def scenario_pair(scenario: str, url: str, root: Path, args: argparse.Namespace,
                  run: int) -> float:
    """One ideal run and one loader run on fresh pages; the loader's ratio."""
    target: Callable[..., None]
    if scenario == "a":
        ideal_pages, ours = PageSet(args.pdf_pages, 0), PageSet(args.pdf_pages, 0)
        ideal_in = [str(ideal_pages.write_pdf(root / f"ideal-a{run}.pdf"))]
        our_in: str = str(ours.write_pdf(root / f"ours-a{run}.pdf"))
        target = run_parser
    else:
        ideal_pages, ours = PageSet(args.files, 0), PageSet(args.files, 0)
        folder = ideal_pages.write_files(root / f"ideal-{scenario}{run}")
        ideal_in = sorted(str(p) for p in folder.iterdir())
        our_in = str(ours.write_files(root / f"ours-{scenario}{run}"))
        target = run_reader if scenario == "b" else run_loader
    held(url)
    ideal = in_child(run_openai, url, ideal_in, args.ideal_concurrency)
    ideal_held = held(url)
    loader = in_child(target, url, our_in, args.concurrency)
    loader_held = held(url)
    # answers differ in length from page to page: compare tokens per second
    ratio: float = (loader_held["tokens"] / loader["wall"]) / (
        ideal_held["tokens"] / ideal["wall"])
    print(f"| ({scenario}) run {run} | {per_minute(ideal):.0f} | {per_minute(loader):.0f} | "
          f"{ratio:.3f} | {ideal_held['mean_held']:.1f} / {loader_held['mean_held']:.1f} | "
          f"{ideal['wall'] - ideal_held['span_s']:.2f} / "
          f"{loader['wall'] - loader_held['span_s']:.2f} | "
          f"{loader['cpu'] / loader['pages'] * 1000:.1f} |", flush=True)
    return ratio


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="rtx5090")
    ap.add_argument("--speed", type=float, default=1.0)
    ap.add_argument("--stream-interval", type=int, default=1)
    ap.add_argument("--concurrency", type=lambda v: v if v == "auto" else int(v), default=32,
                    help="the loader's limit (a number, or auto)")
    ap.add_argument("--ideal-concurrency", type=int, default=32)
    ap.add_argument("--pdf-pages", type=int, default=300)
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scenarios", nargs="*", default=["a", "b", "c"], choices=("a", "b", "c"))
    args = ap.parse_args()
    print(f"{args.profile}, {args.stream_interval} token(s) per event, loader concurrency "
          f"{args.concurrency}, ideal {args.ideal_concurrency}")
    print("| scenario | ideal pages/min | loader pages/min | ratio | requests held, ideal / "
          "loader | seconds outside the server's span, ideal / loader | loader CPU ms/page |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    ratios: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp, \
            launched("--profile", args.profile, "--tokens", "300-800", "--stream-interval",
                     str(args.stream_interval), "--speed", str(args.speed)) as url:
        for run in range(1, args.runs + 1):
            for scenario in args.scenarios:
                ratios.setdefault(scenario, []).append(
                    scenario_pair(scenario, url, Path(tmp), args, run))
    for scenario, values in ratios.items():
        print(f"({scenario}) ratio min / median / max over {len(values)} runs: "
              f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}")


if __name__ == "__main__":
    main()
