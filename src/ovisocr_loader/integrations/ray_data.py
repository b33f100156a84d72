"""Ray Data: one row per page, over many workers and machines (the ``ray`` extra).

Two ordinary Ray Data steps. :func:`plan_page_ranges` (tasks) opens each file once
to count its pages and cuts it into ranges, so a 2000-page PDF spreads over every
worker. :class:`OvisBatchParser` (actors) runs the same async pipeline as
:class:`~ovisocr_loader.OvisParser` - loop guard, retries, outage wait, cache,
endpoints - over a batch of ranges and returns one row per page.

Nothing here raises for a bad file or page: Ray retries or drops whole blocks
(``max_errored_blocks`` loses every row of a failed block), so each failure is
recorded in its own row's ``error`` column instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import ray.data

from .._sync import running_loop
from ..config import RenderSettings
from ..document import PageErrorInfo, PageResult, ParsedDocument
from ..errors import OvisLoaderError
from ..jobs import FAILURES_REPORTED_FROM_RESULTS, DocumentJob
from ..parser import OvisParser
from ..sources import expand_paths, load_input, open_source

#: One row per page. ``page_number`` is null only for a file that could not be
#: opened at all (then ``total_pages`` is 0 and ``error`` says why).
ROW_SCHEMA = pa.schema([
    ("source", pa.string()),
    ("sha256", pa.string()),
    ("page_number", pa.int32()),
    ("total_pages", pa.int32()),
    ("markdown", pa.string()),
    ("elements", pa.string()),
    ("blank", pa.bool_()),
    ("loop_trimmed", pa.bool_()),
    ("truncated", pa.bool_()),
    ("rotation", pa.int16()),
    ("error", pa.string()),
    ("model", pa.string()),
])

#: Up to this many files, ranges are planned on the driver (a few ms a file, and no
#: worker process to start before the first page); beyond it, in Ray tasks.
PLAN_ON_DRIVER_UP_TO = 256

#: Rows per output file to ask Ray's writers for (``min_rows_per_file=``): each worker
#: call returns one small block, and a file per block would mean thousands of tiny
#: files (and a write task each) for a big archive.
ROWS_PER_FILE = 4096

#: Pages per range: enough for a worker to keep its requests busy, few enough that
#: one big PDF spreads over all workers.
DEFAULT_PAGES_PER_TASK = 8



def plan_page_ranges(row: dict[str, Any], *, pages_per_task: int = DEFAULT_PAGES_PER_TASK,
                     pages: Sequence[int] | None = None, password: str | None = None
                     ) -> list[dict[str, Any]]:
    """``{"path"}`` -> ``{"path", "pages"}`` rows whose page lists cover the file (or
    the ``pages`` selected in it), ``pages_per_task`` pages each.

    A file that cannot be opened here (or lacks a selected page) becomes one row
    with the whole selection: the worker opens it again and records why it failed,
    as one error row per selected page (one row when all pages were asked for).
    """
    path = str(row["path"])
    try:
        source = open_source(load_input(path, content_hash=False), RenderSettings(),
                             password=password, pages=pages)
        numbers = list(source.page_numbers)
        source.close()
    except Exception:
        numbers = []
    if not numbers:
        return [{"path": path, "pages": list(pages) if pages else None}]
    return [{"path": path, "pages": numbers[i:i + pages_per_task]}
            for i in range(0, len(numbers), pages_per_task)]


def worker_parser(parser_options: dict[str, Any], workers: int) -> OvisParser:
    """The parser of one of ``workers`` Ray workers: its share of the limits
    (:meth:`OvisParser.share`), errors always recorded, never raised, and pages rendered
    in the worker's threads (Ray spreads the work over cores already: no render
    processes of its own)."""
    options = {**parser_options, "errors": "record", "render_workers": 0}
    return OvisParser(**options).share(workers)


class OvisBatchParser:
    """A Ray Data callable class: a batch of page ranges in, one row per page out.

    Use it with ``map_batches(OvisBatchParser, fn_constructor_kwargs={...},
    batch_format="pyarrow", compute=ActorPoolStrategy(size=N))`` over rows with a
    ``path`` and optional ``pages`` (a list of 1-based numbers; null: the whole file). The keyword
    arguments are :class:`~ovisocr_loader.OvisParser`'s; ``workers`` says how many
    copies share its ``concurrency`` (each takes its part). Each copy holds its
    parser open (connections, adaptive limit, cache) for its whole life.
    """

    def __init__(self, *, workers: int = 1, password: str | None = None,
                 **parser_options: Any) -> None:
        self.parser = worker_parser(parser_options, workers)
        self.password = password
        self._loop: asyncio.AbstractEventLoop | None = None

    async def __call__(self, batch: pa.Table) -> pa.Table:
        # each failure is a row; the driver names them (a worker's warning is forwarded
        # to the driver's terminal too: it would say each one twice)
        FAILURES_REPORTED_FROM_RESULTS.set(True)
        if self._loop is None:
            await self.parser.__aenter__()
            self._loop = asyncio.get_running_loop()
        ranges = batch.to_pylist()
        parts = await asyncio.gather(*(self._parse_range(r) for r in ranges))
        return pa.Table.from_pylist([row for part in parts for row in part], schema=ROW_SCHEMA)

    async def _parse_range(self, item: dict[str, Any]) -> list[dict[str, Any]]:
        pages = [int(n) for n in item["pages"]] if item.get("pages") else None
        job = DocumentJob(str(item["path"]), self.password, pages)
        try:   # to its end: a generator left suspended holds its session until collected
            (doc,) = [doc async for doc in self.parser.aparse_many([job])]
            return document_rows(doc, pages)
        except OvisLoaderError as exc:  # the session itself failed: every page says why
            doc = ParsedDocument(source=str(job.source),
                                 error=PageErrorInfo.from_exception(exc))
            return document_rows(doc, pages)

    def __del__(self) -> None:
        """Ray Data deletes the callable when the actor retires: close its connections
        on the loop that opened them (still running then)."""
        loop, self._loop = self._loop, None
        if loop is None or not loop.is_running():
            return
        with contextlib.suppress(Exception):
            if running_loop() is loop:   # dropped on that loop: it cannot wait for itself
                task = loop.create_task(self.parser.aclose())
                _CLOSING.add(task)
                task.add_done_callback(_CLOSING.discard)
            else:
                asyncio.run_coroutine_threadsafe(self.parser.aclose(), loop).result(timeout=10)


#: closings scheduled by a worker dropped on its own loop (a task needs a reference)
_CLOSING: set[asyncio.Task[None]] = set()


def document_rows(doc: ParsedDocument, pages: Sequence[int] | None = None
                  ) -> list[dict[str, Any]]:
    """The rows of one parsed range: a row per page, or, when the file failed as a
    whole, a row per page of the range asked for (one row if the range was all)."""
    if doc.error is not None or not doc.pages:
        error = doc.error.text if doc.error else "EmptyDocumentError: no pages"
        numbers: Sequence[int | None] = list(pages) if pages else [None]
        return [_row(doc, number, None, error) for number in numbers]
    return [_row(doc, page.page_number, page, page.error.text if page.error else None)
            for page in doc.pages]


def _row(doc: ParsedDocument, page_number: int | None, page: PageResult | None,
         error: str | None) -> dict[str, Any]:
    """One row, its values in :data:`ROW_SCHEMA` order (the one list of columns)."""
    flags = page.flags if page is not None else []
    elements = json.dumps([e.model_dump(mode="json", exclude={"image_png"})
                           for e in page.elements], ensure_ascii=False) if page else "[]"
    values = (doc.source, doc.sha256, page_number, doc.total_pages,
              page.markdown if page else "", elements, "blank" in flags,
              "loop_trimmed" in flags, "truncated" in flags, page.rotation if page else 0,
              error, doc.model)
    return dict(zip(ROW_SCHEMA.names, values, strict=True))


def ranges_per_worker(parser: OvisParser) -> int:
    """Ranges a worker holds at once: one per request it may have in flight (so even
    one-page files keep it busy; an adaptive limit may double from where it starts),
    8 to 64. Ray hands ranges to workers in advance and a worker cannot pass them on,
    so holding many more would leave one worker with a backlog at the end while the
    others idle."""
    settings = parser.settings
    limit = 2 * settings.adaptive.start if settings.auto else int(settings.concurrency)
    return max(8, min(64, limit))


def _cluster_cpus() -> float:
    if ray.is_initialized():
        resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
        return resources.get("CPU", 2.0)
    return float(os.cpu_count() or 2)


def default_workers() -> int:
    """Half the cluster's CPUs (the rest plans ranges and writes output), 1 to 8."""
    return max(1, min(8, int(_cluster_cpus() // 2)))


def worker_cpus(workers: int) -> float:
    """CPUs reserved per worker: 1, or less when ``workers`` would otherwise take more
    than half the cluster and leave the planning tasks no CPU to run on."""
    return min(1.0, _cluster_cpus() / (2 * workers))


def read_scans(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], *,
               workers: int | None = None, pages_per_task: int = DEFAULT_PAGES_PER_TASK,
               num_cpus: float | None = None, password: str | None = None,
               pages: Sequence[int] | None = None, plan_on_driver: bool | None = None,
               **parser_options: Any) -> ray.data.Dataset:
    """A Ray Dataset with one row per page of every file in ``paths`` (see ``ROW_SCHEMA``).

    ``paths``: files, directories (searched recursively) and globs, readable at
    the same path on every node. ``parser_options`` are
    :class:`~ovisocr_loader.OvisParser`'s; ``concurrency`` is the total over all
    ``workers`` (default: half the cluster's CPUs, at most 8), each holding
    ``num_cpus`` (default 1, less on a small cluster so planning keeps a CPU).
    ``pages`` selects 1-based pages of every file. Files are cut into ranges on
    the driver, or in Ray tasks with ``plan_on_driver=False`` (the default beyond
    ``PLAN_ON_DRIVER_UP_TO`` files). A ``cache_dir`` uses the ``files`` layout
    unless ``cache_layout`` says otherwise. The dataset is lazy: write it with
    ``write_parquet(..., min_rows_per_file=ROWS_PER_FILE)`` or iterate it.
    """
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    files = [str(p) for p in expand_paths(items)]
    if not files:
        raise ValueError(f"no PDF or image files found in {items!r}")
    if pages_per_task < 1:
        raise ValueError("pages_per_task must be at least 1")
    workers = workers or default_workers()
    options = {"cache_layout": "files", **parser_options}
    parser = OvisParser(**options)  # bad options fail here, on the driver, not in every worker
    if parser.settings.cache_dir is None or parser.settings.model is None:
        options["model"] = parser.check()  # no server, or a wrong model: fail now, once
    calls = ranges_per_worker(parser.share(workers))
    ranges = _ranges(files, plan_on_driver, pages_per_task=pages_per_task, pages=pages,
                     password=password)
    return ranges.map_batches(
        OvisBatchParser, batch_format="pyarrow", batch_size=1,
        fn_constructor_kwargs={"workers": workers, "password": password, **options},
        compute=ray.data.ActorPoolStrategy(size=workers, max_concurrent_calls_per_actor=calls,
                                           max_tasks_in_flight_per_actor=calls),
        num_cpus=worker_cpus(workers) if num_cpus is None else num_cpus)


def _ranges(files: list[str], on_driver: bool | None, **plan: Any) -> ray.data.Dataset:
    """The page ranges of ``files``: planned here for a few files (no worker process
    to start before the first page), in Ray tasks for many."""
    if on_driver is None:
        on_driver = len(files) <= PLAN_ON_DRIVER_UP_TO
    if on_driver:
        return ray.data.from_items([r for f in files for r in plan_page_ranges({"path": f},
                                                                                **plan)])
    return ray.data.from_items([{"path": f} for f in files]).flat_map(
        plan_page_ranges, fn_kwargs=plan, num_cpus=0.25)
