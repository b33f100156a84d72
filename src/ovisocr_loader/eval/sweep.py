"""The field report's DPI study in one call: parse the same scans at each DPI, score
every run against the references, and time it.

Pages per minute is the wall-clock rate of the whole run at that DPI (rendering,
requests, parsing), as a user would see it; with a cache, use a fresh one per study
or the rate measures the cache.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..jobs import DocumentJob
from ..parser import OvisParser
from .report import ReportFormat, table_rows
from .runs import Reference, Run, from_document
from .scores import Evaluation, Summary, evaluate, summarise


@dataclass(frozen=True)
class DpiResult:
    dpi: float
    summary: Summary
    evaluation: Evaluation
    pages: int
    seconds: float

    @property
    def pages_per_minute(self) -> float:
        return self.pages / self.seconds * 60 if self.seconds > 0 else float("nan")


def dpi_sweep(scans: Sequence[str | Path], references: dict[str, Reference],
              dpis: Sequence[float], *, password: str | None = None,
              pages: Sequence[int] | None = None, **parser_options: Any) -> list[DpiResult]:
    """Parse ``scans`` (their ``pages``, default all) once per DPI with
    ``OvisParser(dpi=..., **parser_options)``. The study times the server, so it reads
    no cache unless ``cache_dir`` is given."""
    results = []
    options = {**parser_options, "cache_dir": parser_options.get("cache_dir") or False}
    for dpi in dpis:
        parser = OvisParser(**{**options, "dpi": dpi})
        started = time.monotonic()
        run = Run()
        jobs = [DocumentJob(str(s), password, list(pages) if pages else None) for s in scans]
        for doc in parser.parse_many(jobs):
            path = Path(doc.source)
            run.documents[path.stem] = from_document(doc, path.stem, path)
        seconds = time.monotonic() - started
        evaluation = evaluate(run, references)
        count = sum(len(d.pages) for d in run.documents.values())
        results.append(DpiResult(dpi, summarise(evaluation), evaluation, count, seconds))
    return results


def sweep_report(results: Sequence[DpiResult], fmt: ReportFormat = "table") -> str:
    """One row per DPI: F1 mean, median and p10, pages, pages per minute, failures."""
    rows = [{"dpi": r.dpi, "documents": r.summary.documents, "mean": r.summary.mean,
             "median": r.summary.median, "p10": r.summary.p10, "pages": r.pages,
             "pages_per_minute": round(r.pages_per_minute, 1),
             "failed": r.summary.flagged["failed"]} for r in results]
    if fmt != "table":
        return table_rows(rows, fmt)
    lines = ["  dpi  documents   mean  median    p10  pages  pages/min  failed"]
    for row in rows:
        lines.append(f"{row['dpi']:5g}  {row['documents']:9d}  {row['mean']:.3f}   "
                     f"{row['median']:.3f}  {row['p10']:.3f}  {row['pages']:5d}  "
                     f"{row['pages_per_minute']:9.0f}  {row['failed']:6d}")
    return "\n".join(lines) + "\n"
