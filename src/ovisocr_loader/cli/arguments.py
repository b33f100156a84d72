"""The ``ovisocr`` command line: every option with its unit and default, and the
checks that turn a bad value into a usage error (exit 2, no traceback)."""

from __future__ import annotations

import argparse

from .. import __version__
from ..config import DPI_RANGE
from .option_flags import add_option_flags, number

EXIT_OK, EXIT_FAILED, EXIT_UNUSABLE, EXIT_INTERRUPTED = 0, 1, 2, 130

ENVIRONMENT = """environment:
  OVISOCR_BASE_URL   endpoint(s), comma-separated (default http://localhost:8000/v1)
  OVISOCR_API_KEY    API key sent as a bearer token
  OVISOCR_MODEL      served model name
  OVISOCR_CACHE_DIR  the page cache's folder (default: the user cache folder)

exit status: 0 all parsed; 1 some page or file failed (the rest is written);
2 nothing usable (no input, no server, bad option); 130 interrupted.
Try it without a GPU: `ovisocr simulate --port 8000` in another terminal."""


def page_ranges(text: str) -> list[int]:
    """``1-3,7`` -> [1, 2, 3, 7]."""
    pages: list[int] = []
    try:
        for part in text.split(","):
            first, _, last = part.strip().partition("-")
            start, end = int(first), int(last or first)
            if start < 1 or end < start:
                raise ValueError
            pages.extend(range(start, end + 1))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"pages are 1-based numbers and ranges such as 1-3,7; got {text!r}") from None
    return sorted(set(pages))


def build() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="ovisocr", description="Scanned PDFs and page images to Markdown with OvisOCR2 "
        "served by vLLM.", epilog=ENVIRONMENT, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _parse_command(sub.add_parser(
        "parse", help="parse PDFs and page images into Markdown or JSON", epilog=ENVIRONMENT,
        formatter_class=argparse.RawTextHelpFormatter))
    _review_command(sub.add_parser(
        "review", help="a static site showing each page beside what was extracted from it",
        epilog=ENVIRONMENT, formatter_class=argparse.RawTextHelpFormatter))
    _eval_command(sub.add_parser(
        "eval", help="word F1 of parsed documents against reference transcriptions (or of\n"
        "scans parsed at several DPIs)", epilog=EVAL_EPILOG,
        formatter_class=argparse.RawTextHelpFormatter))
    _compare_command(sub.add_parser(
        "compare", help="two runs of the same documents head to head", epilog=EVAL_EPILOG,
        formatter_class=argparse.RawTextHelpFormatter))
    _bench_command(sub.add_parser(
        "bench", help="measure an endpoint: pages/min and latency per concurrency level",
        formatter_class=argparse.RawTextHelpFormatter))
    _simulate_command(sub.add_parser(
        "simulate", help="serve the simulated OvisOCR2 model on 127.0.0.1 (no GPU needed)",
        formatter_class=argparse.RawTextHelpFormatter))
    return ap


def _parse_command(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="PDF or image files, directories (searched recursively) or globs")
    p.add_argument("-o", "--output", default=".", metavar="OUT",
                   help="a directory (input folders are mirrored under it), a file such as\n"
                        "result.md for a single input, or - for stdout (default: .)")
    p.add_argument("--format", action="append", choices=("md", "json", "parquet"),
                   metavar="FORMAT",
                   help="md or json; repeat to write both (default: md; with -o -, json\n"
                        "means JSON lines); with --engine ray: parquet (default) or json,\n"
                        "one row per page, files in the -o directory")
    _parser_options(p, "parse")
    p.add_argument("--engine", choices=("local", "ray"), default="local",
                   help="local: this process (default); ray: Ray Data workers, one row\n"
                        "per page (needs the ray extra)")
    p.add_argument("--ray-address", metavar="ADDR",
                   help="Ray cluster to join, e.g. ray://head:10001 or auto (default: a\n"
                        "local Ray started for this run)")
    p.add_argument("--workers", type=number(int, 1, 4096), default=None, metavar="N",
                   help="Ray workers sharing --concurrency (default: half the cluster's\n"
                        "CPUs, at most 8)")
    _progress_option(p)


def _review_command(r: argparse.ArgumentParser) -> None:
    r.add_argument("paths", nargs="+", metavar="PATH",
                   help="PDF or image files, directories or globs (parsed now), or the\n"
                        ".json files of an earlier `ovisocr parse` (shown as saved)")
    r.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="folder for the site: DIR/index.html and a page per document")
    _parser_options(r, "review")
    _progress_option(r)


def _parser_options(p: argparse.ArgumentParser, command: str) -> None:
    """What reading a page takes: the parse options ``command`` exposes, and which
    pages of which (encrypted) input."""
    p.add_argument("--pages", type=page_ranges, metavar="RANGES",
                   help="only these 1-based pages of each input, e.g. 1-3,7 (default: all)")
    if command in ("parse", "review"):
        p.add_argument("--follow-links", action="store_true",
                       help="read links in input folders that point outside them (default:\n"
                            "left out, with a warning)")
    add_option_flags(p, command)
    p.add_argument("--no-cache", action="store_true",
                   help="keep no finished pages (every page is sent, every run)")
    p.add_argument("--password", metavar="PASSWORD", help="password for encrypted PDFs")


EVAL_EPILOG = """word F1 (docs/eval.md): bag of words, Unicode-normalised and case-folded, markup
removed, CJK one word per character; mean, median and 10th percentile per run.

exit status: 0 every document scored; 1 scored, but some document had no
reference, could not be read, or its page references did not match; 2 nothing
to score (no outputs, no references, no document with both)."""


def dpi_list(text: str) -> list[float]:
    """``100,150,200`` -> [100.0, 150.0, 200.0], each within 72-1200."""
    check = number(float, *DPI_RANGE)
    values = [check(part.strip()) for part in text.split(",") if part.strip()]
    if not values:
        raise argparse.ArgumentTypeError("give at least one DPI, e.g. 150 or 100,150,200")
    return list(dict.fromkeys(values))


def _eval_command(e: argparse.ArgumentParser) -> None:
    e.add_argument("paths", nargs="+", metavar="OUTPUTS|SCANS",
                   help="what `ovisocr parse` wrote (.md or .json files, or folders of\n"
                        "them), or scans to parse now at each --dpi")
    _reference_options(e, required=True)
    e.add_argument("--dpi", type=dpi_list, default=[150.0], metavar="DPI[,DPI...]",
                   help="with scans: parse at each of these resolutions and report F1\n"
                        "and pages/min per DPI (default: 150)")
    _parser_options(e, "eval")


def _compare_command(c: argparse.ArgumentParser) -> None:
    c.add_argument("a", metavar="A", help="the first run: a folder or file of .md/.json outputs")
    c.add_argument("b", metavar="B", help="the second run, same documents")
    _reference_options(c, required=False)
    c.add_argument("--tie-margin", type=number(float, 0, 1), default=0.005, metavar="F1",
                   help="F1 differences up to this are ties (default: 0.005)")
    c.add_argument("--plot", metavar="DIR",
                   help="write scatter.svg (F1 of A against B) and histogram.svg in DIR")


def _reference_options(p: argparse.ArgumentParser, *, required: bool) -> None:
    p.add_argument("--reference", action="append", required=required, metavar="REFS",
                   help="reference transcriptions (.txt/.md), a folder or files, matched\n"
                        "by name or file stem; form feeds split pages"
                        + ("" if required else "\n(without: how far A and B agree)"))
    p.add_argument("--format", choices=("table", "json", "csv"), default="table",
                   help="table (default), json, or csv with one row per document")
    p.add_argument("--worst", type=number(int, 0), default=5, metavar="N",
                   help="list the N lowest-scoring (or most different) documents (default: 5)")


def _progress_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-progress", action="store_true",
                   help="print no progress (default: a bar on a terminal, a line every\n"
                        "10 seconds otherwise)")


def _bench_command(b: argparse.ArgumentParser) -> None:
    add_option_flags(b, "bench")
    b.add_argument("--levels", default="8,16,32,64", metavar="N,N,...",
                   help="comma-separated concurrency levels (default: 8,16,32,64)")
    b.add_argument("--pages-per-level", type=number(int, 1), default=None, metavar="N",
                   help="fresh pages per level (default: 3x the level, at least 16)")
    b.add_argument("--warmup", type=number(int, 0), default=4, metavar="N",
                   help="pages sent first and not counted (default: 4)")


def _simulate_command(s: argparse.ArgumentParser) -> None:
    s.add_argument("--port", type=number(int, 0, 65535), default=8000, metavar="PORT",
                   help="TCP port on 127.0.0.1; 0 picks a free one (default: 8000)")
    s.add_argument("--gpu", choices=("small", "rtx5090", "large"), default="rtx5090",
                   help="capacity profile: small (elbow ~12), rtx5090 (~32), large (~128)\n"
                        "(default: rtx5090)")
    s.add_argument("--speed", type=number(float, 0, low_open=True), default=1.0,
                   metavar="FACTOR",
                   help="multiply the field-calibrated decode speed (default: 1)")
    s.add_argument("--model", default=None, metavar="NAME",
                   help="model name to serve (default: ATH-MaaS/OvisOCR2)")
    s.add_argument("--stream-interval", type=number(int, 1), default=1, metavar="N",
                   help="tokens per streamed event, as vLLM's --stream-interval\n"
                        "(default: 1, one event per token like vLLM)")
