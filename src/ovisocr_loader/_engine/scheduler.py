"""The page pipeline shared by every entry point: a scheduler over one session.

Pages of all inputs flow through one session per event loop: rendering runs
ahead of requests inside a bounded window of pages (never whole documents), one
in-flight limit covers every request, results are reassembled in page order and
documents are emitted as soon as their last page finishes. Memory is bounded by
the window, whatever the size or number of the inputs. Each page goes through
:mod:`.page_step`; :class:`Scheduler` only decides what runs when.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncGenerator, Coroutine, Iterable
from dataclasses import dataclass, field
from typing import Any

from .._sync import END, settle
from ..config import RenderSettings
from ..document import PageErrorInfo, PageResult, ParsedDocument, mark_running_furniture
from ..errors import CorruptFileError, PageError, SourceError
from ..jobs import (
    FAILURES_REPORTED_FROM_RESULTS,
    DocumentJob,
    DocumentStarted,
    PageFinished,
    ProgressCallback,
)
from ..sources import PageSource, SourceInput, load_input, open_source
from .page_step import PageDone, PageJob, cached_page, produce_page
from .session import Session

log = logging.getLogger("ovisocr_loader")


@dataclass(eq=False)
class _Run:
    """A document in flight: its open source and the pages finished so far."""

    name: str
    sha256: str
    source: PageSource
    #: the file on disk (None for bytes and streams): where its pages' places are
    path: str | None = None
    results: dict[int, PageResult] = field(default_factory=dict)
    all_spawned: bool = False

    @property
    def complete(self) -> bool:
        return self.all_spawned and len(self.results) == len(self.source.page_numbers)

    def document(self, model: str | None) -> ParsedDocument:
        mark_running_furniture([self.results[n].elements for n in sorted(self.results)])
        return ParsedDocument(source=self.name, sha256=self.sha256,
                              total_pages=self.source.page_count, model=model,
                              pages=[self.results[n] for n in sorted(self.results)])


async def parse_documents(session: Session, jobs: Iterable[DocumentJob], *,
                          raise_source_errors: bool = False,
                          on_event: ProgressCallback | None = None
                          ) -> AsyncGenerator[ParsedDocument, None]:
    """Parse ``jobs`` through ``session``; yield each document when it completes.

    Documents come out in completion order (a short document queued behind a long
    one may finish first); pages inside a document are always in page order.
    """
    scheduler = Scheduler(session, jobs, raise_source_errors=raise_source_errors,
                          on_event=on_event)
    async with contextlib.aclosing(scheduler.documents()) as docs:
        async for doc in docs:
            yield doc


class Scheduler:
    """Opens inputs one after another and admits their pages under the session's window.

    Finished documents, and errors that end the run, go through one queue to
    :meth:`documents`; stopping early cancels what is in flight and closes inputs.
    """

    def __init__(self, session: Session, jobs: Iterable[DocumentJob], *,
                 raise_source_errors: bool = False,
                 on_event: ProgressCallback | None = None) -> None:
        self.session = session
        self.jobs = jobs
        self.raise_source_errors = raise_source_errors or session.settings.errors == "raise"
        self.notify: ProgressCallback = on_event or (lambda event: None)
        self.out: asyncio.Queue[object] = asyncio.Queue()
        self.tasks: set[asyncio.Task[None]] = set()
        self.open_runs: set[_Run] = set()
        self.closing: set[asyncio.Task[None]] = set()
        self.unfinished = 0
        self.producing = True

    async def documents(self) -> AsyncGenerator[ParsedDocument, None]:
        producer = asyncio.create_task(self._produce())
        try:
            while True:
                item = await self.out.get()
                if settle(item):
                    return
                assert isinstance(item, ParsedDocument)
                yield item
        finally:
            pending = [producer, *self.tasks]
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            for run in list(self.open_runs):   # stopped early: close what is still open
                self._close(run)
            await asyncio.gather(*self.closing, return_exceptions=True)

    async def _produce(self) -> None:
        try:
            if self.session.probe_first:
                await self.session.ready()
            for job in self.jobs:
                run = await self._open(job)
                if run is not None:
                    await self._admit(run)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            self.out.put_nowait(exc)
            return
        self.producing = False
        self._maybe_end()

    async def _open(self, job: DocumentJob) -> _Run | None:
        """Open one input; one that cannot be opened is recorded (or raised), never fatal."""
        label = _label(job)
        await self.session.open_documents.acquire()
        try:
            inp, source = await asyncio.to_thread(_load_and_open, job, label,
                                                  self.session.settings.render)
        except BaseException as exc:
            self.session.open_documents.release()
            error = _as_source_error(exc, label)
            if self.raise_source_errors:
                raise error from (None if error is exc else exc)
            name, info = error.file or label or "<input>", PageErrorInfo.from_exception(error)
            if not FAILURES_REPORTED_FROM_RESULTS.get():
                log.warning("%s: %s", name, info.text)
            self.out.put_nowait(ParsedDocument(source=name, error=info))
            return None
        self.notify(DocumentStarted(inp.name, len(source.page_numbers)))
        self.unfinished += 1
        run = _Run(inp.name, inp.sha256, source,
                   path=os.fspath(inp.path) if inp.path is not None else None)
        self.open_runs.add(run)
        return run

    async def _admit(self, run: _Run) -> None:
        """Start every page of ``run``, each as soon as the window has room."""
        session = self.session
        for number in run.source.page_numbers:
            job = PageJob(run.source, run.name, run.sha256, number,
                          await session.cache_key(run.sha256, number),
                          session.place(run.path, number))
            done = await cached_page(session, job)
            if done is not None:
                self._page_done(run, done)
                continue
            await session.window.acquire()
            self._spawn(self._page(run, job))
        run.all_spawned = True
        if run.complete:
            self._finish(run)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _page(self, run: _Run, job: PageJob) -> None:
        try:
            done = await produce_page(self.session, job)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # the session itself failed (no server at all): stop
            self.out.put_nowait(exc)
            return
        finally:
            self.session.window.release()
        self._page_done(run, done)

    def _page_done(self, run: _Run, done: PageDone) -> None:
        result = done.result
        run.results[result.page_number] = result
        self.notify(PageFinished(run.name, result))
        if result.error is not None:
            if self.session.settings.errors == "raise":
                error = PageError(result.error.message, kind=result.error.kind, file=run.name,
                                  page=result.page_number,
                                  status_code=getattr(done.cause, "status_code", None))
                error.__cause__ = done.cause
                self.out.put_nowait(error)
            elif not FAILURES_REPORTED_FROM_RESULTS.get():
                log.warning("%s page %d failed: %s", run.name, result.page_number,
                            result.error.text)
        if run.complete:
            self._finish(run)

    def _finish(self, run: _Run) -> None:
        self._close(run)
        self.unfinished -= 1
        self.out.put_nowait(run.document(self.session.model))
        self._maybe_end()

    def _close(self, run: _Run) -> None:
        if run in self.open_runs:
            self.open_runs.discard(run)
            task = asyncio.get_running_loop().create_task(self._close_source(run))
            self.closing.add(task)
            task.add_done_callback(self.closing.discard)

    async def _close_source(self, run: _Run) -> None:
        """Close in a worker thread: closing a PDF waits for PDFium's lock, which a render
        thread may hold; the event loop never waits for it."""
        try:
            await asyncio.to_thread(run.source.close)
        finally:
            self.session.open_documents.release()

    def _maybe_end(self) -> None:
        if not self.producing and self.unfinished == 0:
            self.out.put_nowait(END)


def _load_and_open(job: DocumentJob, label: str | None, settings: RenderSettings
                    ) -> tuple[SourceInput, PageSource]:
    """Read and open one input: one trip to a worker thread."""
    inp = load_input(job.source, name=label)
    return inp, open_source(inp, settings, password=job.password, pages=job.pages)


def _label(job: DocumentJob) -> str | None:
    if job.name:
        return job.name
    if isinstance(job.source, (bytes, bytearray, memoryview)) or hasattr(job.source, "read"):
        return None
    return str(job.source)


def _as_source_error(exc: BaseException, label: str | None) -> SourceError:
    """What went wrong opening an input, as that input's error (a decoder's own
    exception on hostile input included); cancellation and interrupts pass through."""
    if isinstance(exc, SourceError):
        return exc
    if not isinstance(exc, Exception):
        raise exc
    return CorruptFileError(f"cannot open ({type(exc).__name__}: {exc})", file=label)
