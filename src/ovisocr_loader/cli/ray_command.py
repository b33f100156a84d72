"""``ovisocr parse --engine ray``: the same inputs and options, parsed by Ray Data
workers into one row per page, written as Parquet (or JSON lines) files in a folder.

Ray prints its own progress; the summary at the end is read back from what was
written, so it counts exactly the rows that reached the disk.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path
from typing import Any

from ..errors import OvisLoaderError
from ..paths import user_path
from ..writes import check_writable_folder, write_failure
from .arguments import EXIT_FAILED, EXIT_OK, EXIT_UNUSABLE


class RayUsageError(ValueError):
    """Options ``--engine ray`` cannot serve."""


def output_folder(args: argparse.Namespace) -> tuple[Path, str]:
    """The folder to write and the format; a folder holding other files is refused
    (a previous run's files of the same format are replaced)."""
    formats = list(dict.fromkeys(args.format or ["parquet"]))
    if len(formats) > 1 or formats[0] not in ("parquet", "json"):
        raise RayUsageError("--engine ray writes one --format: parquet or json")
    if args.output in ("-", "."):
        raise RayUsageError("--engine ray writes a folder of files: give -o DIR")
    folder = Path(user_path(args.output))
    if folder.exists() and not folder.is_dir():
        raise RayUsageError(f"{folder} is a file; --engine ray needs a folder")
    if folder.is_dir():
        others = [p.name for p in folder.iterdir() if p.suffix != f".{formats[0]}"]
        if others:
            raise RayUsageError(f"{folder} holds other files ({', '.join(sorted(others)[:3])}"
                                f"); give an empty or new folder")
    try:   # before a page is sent, as for the local engine
        check_writable_folder(folder)
    except OSError as exc:
        raise RayUsageError(f"cannot write to {write_failure(exc, folder)}") from exc
    return folder, formats[0]


def run_parse_ray(args: argparse.Namespace, files: list[Path], options: dict[str, Any],
                  say: Any) -> int:
    """Parse ``files`` on Ray with ``options`` (OvisParser's) and write them; returns the
    exit status."""
    try:
        folder, fmt = output_folder(args)
        from ..ray import ROWS_PER_FILE, read_scans  # the ray extra, named if missing
    except (RayUsageError, ImportError) as exc:
        say(str(exc))
        return EXIT_UNUSABLE
    import ray
    from ray.data import SaveMode

    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=args.ray_address, logging_level=logging.WARNING,
                 include_dashboard=False)
    try:
        started = time.monotonic()
        dataset = read_scans([str(f) for f in files], workers=args.workers, pages=args.pages,
                             password=args.password, **options)
        write = dataset.write_parquet if fmt == "parquet" else dataset.write_json
        write(str(folder), mode=SaveMode.OVERWRITE, min_rows_per_file=ROWS_PER_FILE)
        elapsed = time.monotonic() - started
    except (OvisLoaderError, ImportError) as exc:
        say(str(exc))
        return EXIT_UNUSABLE
    finally:
        if started_here:
            ray.shutdown()
    return _summary(folder, fmt, elapsed, say)


def _summary(folder: Path, fmt: str, elapsed: float, say: Any) -> int:
    """Count what was written: pages, failed pages, files that failed as a whole."""
    import pyarrow.dataset as pads

    table = pads.dataset(str(folder), format=fmt).to_table(
        columns=["source", "page_number", "error"])
    rows = table.to_pylist()
    sources = {r["source"] for r in rows}
    failed_files = {r["source"]: r["error"] for r in rows if r["page_number"] is None}
    for source, error in sorted(failed_files.items()):   # named, as the local engine does
        say(f"{source}: {error}")
    page_errors = sum(1 for r in rows if r["error"] and r["page_number"] is not None)
    pages = sum(1 for r in rows if r["page_number"] is not None)
    rate = pages / elapsed * 60 if elapsed > 0 else 0.0
    say(f"{len(sources) - len(failed_files)}/{len(sources)} files, {pages} pages in "
        f"{elapsed:.1f} s ({rate:.0f} pages/min); {page_errors} page errors, "
        f"{len(failed_files)} files failed; {len(rows)} rows in {folder}")
    return EXIT_FAILED if failed_files or page_errors else EXIT_OK
