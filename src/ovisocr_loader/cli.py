"""The ``ovisocr`` command: parse files, measure an endpoint, or run the simulator.

``ovisocr parse PATH...`` writes one output file per input (pages in order),
shows a progress bar on a terminal and a summary at the end, and exits non-zero
when any file or page failed. ``ovisocr bench`` measures a real endpoint at
several concurrency levels; ``ovisocr simulate`` serves the simulated model.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from tqdm import tqdm

from .document import ParsedDocument
from .errors import OvisLoaderError
from .parser import OvisParser
from .paths import user_path
from .pipeline import DocumentStarted, PageFinished, ProgressEvent
from .sources import expand_paths

EXIT_OK, EXIT_FAILED, EXIT_UNUSABLE = 0, 1, 2


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    if args.command == "simulate":
        return _simulate(args)
    if args.command == "bench":
        return _bench(args)
    return _parse(args)


def _arguments() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="ovisocr", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("parse", help="parse PDFs and page images into Markdown or JSON")
    p.add_argument("paths", nargs="+", help="files or directories (searched recursively)")
    p.add_argument("-o", "--output", default=".", help="output directory (default: .)")
    p.add_argument("--format", choices=("md", "json"), default="md")
    p.add_argument("--base-url", action="append", metavar="URL",
                   help="OpenAI-compatible endpoint (env OVISOCR_BASE_URL); repeat it to "
                        "spread requests over several servers")
    p.add_argument("--cache", metavar="DIR",
                   help="keep finished pages in DIR: reruns and resumed runs skip them")
    p.add_argument("--model", help="served model name (env OVISOCR_MODEL; default: discovered)")
    p.add_argument("--concurrency", type=int, default=32, help="requests in flight (default 32)")
    p.add_argument("--dpi", type=float, default=150, help="render resolution (default 150)")
    p.add_argument("--password", help="password for encrypted PDFs")
    p.add_argument("--first-token-timeout", type=float, default=120.0)
    p.add_argument("--page-timeout", type=float, default=900.0)
    p.add_argument("--server-wait", type=float, default=600.0, metavar="SECONDS",
                   help="when the server stops answering mid-run (a restart), wait this "
                        "long for it before recording the remaining pages as errors "
                        "(default 600)")
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    b = sub.add_parser("bench", help="measure an endpoint: pages/min and latency per "
                                     "concurrency level, and its elbow")
    b.add_argument("--base-url", action="append", metavar="URL",
                   help="endpoint to measure (env OVISOCR_BASE_URL); repeat for several")
    b.add_argument("--model", help="served model name (default: discovered)")
    b.add_argument("--levels", default="8,16,32,64",
                   help="comma-separated concurrency levels (default 8,16,32,64)")
    b.add_argument("--pages-per-level", type=int, default=None,
                   help="fresh pages per level (default 3x the level, at least 16)")
    b.add_argument("--warmup", type=int, default=4, help="pages sent first, not counted")
    b.add_argument("--dpi", type=float, default=150)
    s = sub.add_parser("simulate", help="serve the simulated OvisOCR2 model on 127.0.0.1")
    s.add_argument("--port", type=int, default=8000)
    s.add_argument("--speed", type=float, default=1.0,
                   help="multiply the field-calibrated decode speed (default 1)")
    s.add_argument("--model", default=None, help="model name to serve")
    return ap


def _parse(args: argparse.Namespace) -> int:
    files = expand_paths(args.paths)
    if not files:
        print("ovisocr: no supported files found", file=sys.stderr)
        return EXIT_UNUSABLE
    parser = OvisParser(base_url=args.base_url, model=args.model, dpi=args.dpi,
                        concurrency=args.concurrency,
                        first_token_timeout=args.first_token_timeout,
                        page_timeout=args.page_timeout, cache_dir=args.cache,
                        server_wait=args.server_wait)
    out_dir = Path(user_path(args.output))
    out_dir.mkdir(parents=True, exist_ok=True)
    targets = _output_names(files, out_dir, args.format)
    progress = _Progress(enabled=not args.no_progress and sys.stderr.isatty())
    started = time.monotonic()
    failed_files = page_errors = pages_done = 0
    try:
        for doc in parser.parse_many([str(f) for f in files], password=args.password,
                                     on_event=progress.update):
            target = targets.get(doc.source)
            if doc.error is not None:
                failed_files += 1
                print(f"ovisocr: {doc.source}: {doc.error.kind}: {doc.error.message}",
                      file=sys.stderr)
                continue
            if target is not None:
                target.write_text(_render(doc, args.format), encoding="utf-8")
            pages_done += len(doc.pages)
            page_errors += len(doc.failed_pages)
    except OvisLoaderError as exc:
        progress.close()
        print(f"ovisocr: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    progress.close()
    elapsed = time.monotonic() - started
    rate = pages_done / elapsed * 60 if elapsed > 0 else 0.0
    print(f"ovisocr: {len(files) - failed_files}/{len(files)} files, {pages_done} pages in "
          f"{elapsed:.1f} s ({rate:.0f} pages/min); {page_errors} page errors, "
          f"{failed_files} files failed; output in {out_dir}", file=sys.stderr)
    return EXIT_FAILED if failed_files or page_errors else EXIT_OK


def _bench(args: argparse.Namespace) -> int:
    from . import bench  # page generation pulls in the test-page helpers; only here

    try:
        levels = sorted({int(v) for v in args.levels.split(",") if v.strip()})
    except ValueError:
        print(f"ovisocr: --levels must be integers: {args.levels}", file=sys.stderr)
        return EXIT_UNUSABLE
    if not levels or min(levels) < 1:
        print("ovisocr: --levels needs at least one level >= 1", file=sys.stderr)
        return EXIT_UNUSABLE
    try:
        results = bench.run(args.base_url, args.model, levels, args.pages_per_level,
                            args.warmup, args.dpi)
    except OvisLoaderError as exc:
        print(f"ovisocr: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    print(bench.report(results))
    return EXIT_FAILED if any(r.errors for r in results) else EXIT_OK


def _output_names(files: list[Path], out_dir: Path, fmt: str) -> dict[str, Path]:
    """One output per input; inputs sharing a stem get -2, -3, … suffixes."""
    names: dict[str, Path] = {}
    used: set[str] = set()
    for path in files:
        stem, n = path.stem, 1
        candidate = f"{stem}.{fmt}"
        while candidate in used:
            n += 1
            candidate = f"{stem}-{n}.{fmt}"
        used.add(candidate)
        names[str(path)] = out_dir / candidate
    return names


def _render(doc: ParsedDocument, fmt: str) -> str:
    if fmt == "json":
        return doc.model_dump_json(indent=2)
    parts = []
    for page in doc.pages:
        note = f"<!-- page {page.page_number}"
        if page.error is not None:
            note += f": {page.error.kind}: {page.error.message}"
        elif page.blank:
            note += ": blank"
        elif page.loop_trimmed:
            note += ": loop_trimmed"
        parts.append(note + " -->\n\n" + page.markdown if page.markdown else note + " -->")
    return "\n\n".join(parts) + "\n"


class _Progress:
    """A tqdm bar of pages done over pages known so far, with pages/min."""

    def __init__(self, enabled: bool, stream: TextIO | None = None) -> None:
        self._bar = tqdm(total=0, unit="page", disable=not enabled, file=stream or sys.stderr,
                         dynamic_ncols=True)
        self._start = time.monotonic()
        self._done = 0

    def update(self, event: ProgressEvent) -> None:
        if isinstance(event, DocumentStarted):
            self._bar.total = (self._bar.total or 0) + event.pages
            self._bar.refresh()
        elif isinstance(event, PageFinished):
            self._done += 1
            minutes = (time.monotonic() - self._start) / 60
            self._bar.set_postfix_str(f"{self._done / minutes:.0f} pages/min" if minutes else "")
            self._bar.update(1)

    def close(self) -> None:
        self._bar.close()


def _simulate(args: argparse.Namespace) -> int:
    from .testing import DEFAULT_MODEL, LatencyModel, Simulator

    sim = Simulator(model=args.model or DEFAULT_MODEL, latency=LatencyModel(speed=args.speed),
                    port=args.port)
    sim.start()
    print(json.dumps({"base_url": sim.base_url, "model": sim.model}), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        sim.stop()
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
