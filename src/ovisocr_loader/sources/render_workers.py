"""PDF pages rendered in worker processes, each with its own PDFium.

PDFium is not thread-safe: in one process every call holds one lock, so render
threads never use more than about one core, and they take the GIL from the event
loop between calls. Worker processes render in parallel and leave the client's
event loop alone. A worker keeps the last few documents it opened (the pages of a
document mostly go to the same few workers) and renders a page as the threads do
(:func:`.render.render_page`). PDFs given as bytes, and images, stay in threads.

``render_workers`` (``OvisParser``) sets the count, 0 by default: workers are spawned,
so they import the calling script again, which needs the ``if __name__ ==
"__main__":`` guard. ``ovisocr`` (whose entry point has it) uses
:func:`default_render_workers`: the cores beyond two (none on two cores or fewer).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from collections import OrderedDict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from ..config import RenderSettings
from .base import PageSource
from .detect import load_input
from .encode import EncodedPage
from .pdf import PdfSource
from .render import render_page

#: documents a worker keeps open
_KEPT_OPEN = 4
_MAX_DEFAULT = 8


def default_render_workers() -> int:
    """The cores beyond two (the event loop and the rest), at most eight."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)
    return max(0, min(_MAX_DEFAULT, cores - 2))


class RenderWorkers:
    """A pool of render processes, started at the first page it renders."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None

    def takes(self, source: PageSource) -> bool:
        """Whether a worker can render this source (a PDF on disk)."""
        return self.workers > 0 and isinstance(source, PdfSource) and source.path is not None

    async def render(self, source: PdfSource, page_number: int, settings: RenderSettings
                     ) -> EncodedPage:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context("spawn"))
        assert source.path is not None
        return await asyncio.get_running_loop().run_in_executor(
            self._pool, render_in_worker, str(source.path), source.password, source.name,
            page_number, settings)

    async def aclose(self) -> None:
        """Stop the workers and wait for them (in a thread: never on the event loop)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)


_open: OrderedDict[tuple[str, str | None, RenderSettings], PdfSource] = OrderedDict()


def render_in_worker(path: str, password: str | None, name: str, page_number: int,
                     settings: RenderSettings) -> EncodedPage:
    """In a worker process: render one page of a PDF on disk (errors name ``name``)."""
    key = (path, password, settings)
    source = _open.pop(key, None)
    if source is None:
        source = PdfSource(load_input(Path(path), name=name, content_hash=False), settings,
                           password=password)
    _open[key] = source
    while len(_open) > _KEPT_OPEN:
        _open.popitem(last=False)[1].close()
    return render_page(source, page_number, settings)
