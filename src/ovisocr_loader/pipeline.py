"""The page pipeline shared by every entry point.

Pages of all inputs flow through one session per event loop: rendering runs
ahead of requests inside a bounded window of pages (never whole documents), one
in-flight limit covers every request, results are reassembled in page order and
documents are emitted as soon as their last page finishes. Memory is bounded by
the window, whatever the size or number of the inputs.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .cache import PageCache, page_key
from .client.endpoints import EndpointPool
from .client.page_client import PageClient
from .client.request import RequestRecipe
from .client.transport import Transport
from .config import GuardPolicy, HealthPolicy, RenderSettings, RetryPolicy, Timeouts
from .document import PageErrorInfo, PageResult, ParsedDocument
from .elements import mark_running_furniture, parse_page
from .elements.crops import crop_figures
from .errors import OvisLoaderError, PageError, ServerStatusError, SourceError
from .sources import EncodedPage, PageSource, Source, encode_page, load_input, open_source

log = logging.getLogger("ovisocr_loader")

ErrorMode = Literal["record", "raise"]
FigureMode = Literal["keep", "crop"]


@dataclass(frozen=True)
class ParserSettings:
    """Everything a session needs; plain data, so parsers and readers pickle."""

    base_urls: tuple[str, ...]
    api_key: str | None
    model: str | None
    render: RenderSettings
    concurrency: int
    prefetch: int
    timeouts: Timeouts
    retry: RetryPolicy
    guard: GuardPolicy
    errors: ErrorMode
    figures: FigureMode = "keep"
    figures_dir: str | None = None
    health: HealthPolicy = field(default_factory=HealthPolicy)
    cache_dir: str | None = None


@dataclass(frozen=True)
class DocumentJob:
    """One input to parse, with its own password and page selection."""

    source: Source
    password: str | None = None
    pages: Sequence[int] | None = None
    name: str | None = None


@dataclass(frozen=True)
class DocumentStarted:
    source: str
    pages: int


@dataclass(frozen=True)
class PageFinished:
    source: str
    page: PageResult


ProgressEvent = DocumentStarted | PageFinished
ProgressCallback = Callable[[ProgressEvent], None]


class Session:
    """Per-event-loop state: the endpoints, the in-flight limit, the render window."""

    def __init__(self, settings: ParserSettings) -> None:
        self.settings = settings
        self.pool = EndpointPool([Transport(url, settings.api_key, settings.timeouts)
                                  for url in settings.base_urls], settings.health)
        self.limiter = asyncio.Semaphore(settings.concurrency)
        self.window = asyncio.Semaphore(settings.concurrency + settings.prefetch)
        #: inputs open at once over all calls on this loop: SimpleDirectoryReader.aload_data
        #: starts one parse per file, and each open PDF holds a file descriptor
        self.open_documents = asyncio.Semaphore(settings.concurrency + settings.prefetch)
        #: pages rendered at once: PDFium itself is serialised, PNG encoding is not
        self.renders = asyncio.Semaphore(max(1, min(4, os.cpu_count() or 1)))
        self.cache = PageCache(settings.cache_dir) if settings.cache_dir else None
        self._ready = asyncio.Lock()
        self._client: PageClient | None = None
        self._failure: OvisLoaderError | None = None

    @property
    def model(self) -> str | None:
        return self._client.recipe.model if self._client is not None else self.settings.model

    async def ready(self) -> PageClient:
        """Probe the endpoint once (fail fast) and resolve the model name."""
        async with self._ready:
            if self._failure is not None:
                raise self._failure
            if self._client is None:
                try:
                    model = await self._resolve_model()
                except OvisLoaderError as exc:
                    self._failure = exc
                    raise
                self._client = PageClient(self.pool, self.recipe(model), self.settings.retry)
            return self._client

    def recipe(self, model: str) -> RequestRecipe:
        """What every request of this session asks for (and what the cache key hashes)."""
        s = self.settings
        return RequestRecipe(model, s.guard, s.render.min_pixels, s.render.max_pixels)

    async def _resolve_model(self) -> str:
        try:
            models = await self.pool.probe()
        except ServerStatusError as exc:
            if self.settings.model:  # some gateways do not serve /models
                log.debug("GET /models failed (%s); using model=%s", exc, self.settings.model)
                return self.settings.model
            raise
        if self.settings.model:
            return self.settings.model
        if not models:
            raise ServerStatusError("the endpoint serves no model; pass model=",
                                    status_code=404, url=self.pool.urls)
        return models[0]

    @property
    def probe_first(self) -> bool:
        """Probe before rendering (fail fast), unless a cached rerun may need no server."""
        return self.cache is None or self.settings.model is None

    async def cache_key(self, sha256: str, page_number: int) -> str | None:
        if self.cache is None:
            return None
        model = self.settings.model or (await self.ready()).recipe.model
        return page_key(sha256, page_number, self.settings.render, self.recipe(model))

    async def lookup(self, key: str | None) -> PageResult | None:
        if self.cache is None or key is None:
            return None
        return await asyncio.to_thread(self.cache.get, key)

    async def remember(self, key: str | None, sha256: str, result: PageResult) -> None:
        if self.cache is not None and key is not None:
            await asyncio.to_thread(self.cache.put, key, sha256, result)

    async def ocr(self, page: EncodedPage, sha256: str = "doc") -> PageResult:
        client = await self.ready()
        async with self.limiter:
            outcome = await client.run(page.png)
        elements = parse_page(outcome.markdown, page.page_number, width=page.width,
                              height=page.height, page_size_pt=page.page_size_pt)
        if self.settings.figures == "crop" and any(e.kind == "figure" for e in elements):
            await asyncio.to_thread(crop_figures, page.png, elements, self.settings.figures_dir,
                                    sha256, page.page_number)
        return PageResult(
            page_number=page.page_number, markdown=outcome.markdown, width=page.width,
            height=page.height, dpi=page.dpi, page_size_pt=page.page_size_pt,
            loop_trimmed=outcome.loop_trimmed, truncated=outcome.truncated,
            error=outcome.error, attempts=outcome.attempts, elements=elements)

    async def aclose(self) -> None:
        await self.pool.aclose()
        if self.cache is not None:
            self.cache.close()


def render_page(source: PageSource, page_number: int, settings: RenderSettings) -> EncodedPage:
    """Render and encode one page (runs in a worker thread)."""
    return encode_page(source.render(page_number), compress_level=settings.png_compress_level)


@dataclass(eq=False)
class _Run:
    """A document in flight: its open source and the pages finished so far."""

    name: str
    sha256: str
    source: PageSource
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


_END = object()


async def parse_documents(session: Session, jobs: Iterable[DocumentJob], *,
                          raise_source_errors: bool = False,
                          on_event: ProgressCallback | None = None
                          ) -> AsyncIterator[ParsedDocument]:
    """Parse ``jobs`` through ``session``; yield each document when it completes.

    Documents come out in completion order (a short document queued behind a long
    one may finish first); pages inside a document are always in page order.
    """
    settings = session.settings
    out: asyncio.Queue[object] = asyncio.Queue()
    tasks: set[asyncio.Task[None]] = set()
    state = {"open": 0, "producing": True}
    notify = on_event or (lambda event: None)

    def maybe_end() -> None:
        if not state["producing"] and state["open"] == 0:
            out.put_nowait(_END)

    open_runs: set[_Run] = set()

    def close(run: _Run) -> None:
        if run in open_runs:
            open_runs.discard(run)
            run.source.close()
            session.open_documents.release()

    def finish(run: _Run) -> None:
        close(run)
        state["open"] -= 1
        out.put_nowait(run.document(session.model))
        maybe_end()

    def page_done(run: _Run, result: PageResult) -> None:
        run.results[result.page_number] = result
        notify(PageFinished(run.name, result))
        if result.error is not None:
            if settings.errors == "raise":
                out.put_nowait(PageError(result.error.message, kind=result.error.kind,
                                         file=run.name, page=result.page_number))
            else:
                log.warning("%s page %d failed: %s: %s", run.name, result.page_number,
                            result.error.kind, result.error.message)
        if run.complete:
            finish(run)

    async def page_task(run: _Run, number: int, key: str | None) -> None:
        """Render one page (holding a window slot), then OCR it unless it is blank."""
        try:
            async with session.renders:
                page = await asyncio.to_thread(render_page, run.source, number,
                                               settings.render)
            if page.blank:  # the model invents text on blank pages: never send them
                result = PageResult(page_number=number, blank=True, width=page.width,
                                    height=page.height, dpi=page.dpi,
                                    page_size_pt=page.page_size_pt)
            else:
                result = await session.ocr(page, run.sha256)
            await session.remember(key, run.sha256, result)
        except asyncio.CancelledError:
            raise
        except SourceError as exc:
            result = PageResult(page_number=number, error=PageErrorInfo(
                kind=type(exc).__name__, message=exc.reason))
        except BaseException as exc:  # a bug or an unreachable server: end the whole run
            out.put_nowait(exc)
            return
        finally:
            session.window.release()
        page_done(run, result)

    async def from_cache(run: _Run, number: int, key: str | None) -> bool:
        """Finish a page from the cache (cutting figure crops again if asked); no request."""
        hit = await session.lookup(key)
        if hit is None:
            return False
        if settings.figures == "crop" and any(e.kind == "figure" for e in hit.elements):
            async with session.window:
                page = await asyncio.to_thread(render_page, run.source, number,
                                               settings.render)
                await asyncio.to_thread(crop_figures, page.png, hit.elements,
                                        settings.figures_dir, run.sha256, number)
        page_done(run, hit)
        return True

    async def open_run(job: DocumentJob) -> _Run | None:
        label = job.name or (str(job.source) if not isinstance(
            job.source, (bytes, bytearray, memoryview)) and not hasattr(job.source, "read")
            else None)
        await session.open_documents.acquire()
        try:
            inp = await asyncio.to_thread(load_input, job.source, name=label)
            source = await asyncio.to_thread(open_source, inp, settings.render,
                                             password=job.password, pages=job.pages)
        except BaseException as exc:
            session.open_documents.release()
            if not isinstance(exc, SourceError) or raise_source_errors or \
                    settings.errors == "raise":
                raise
            log.warning("%s", exc)
            out.put_nowait(ParsedDocument(
                source=exc.file or label or "<input>",
                error=PageErrorInfo(kind=type(exc).__name__, message=exc.reason)))
            return None
        notify(DocumentStarted(inp.name, len(source.page_numbers)))
        state["open"] += 1
        run = _Run(inp.name, inp.sha256, source)
        open_runs.add(run)
        return run

    async def produce() -> None:
        try:
            if session.probe_first:
                await session.ready()
            for job in jobs:
                run = await open_run(job)
                if run is None:
                    continue
                for number in run.source.page_numbers:
                    key = await session.cache_key(run.sha256, number)
                    if await from_cache(run, number, key):
                        continue
                    await session.window.acquire()
                    task = asyncio.create_task(page_task(run, number, key))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
                run.all_spawned = True
                if run.complete:
                    finish(run)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            out.put_nowait(exc)
            return
        state["producing"] = False
        maybe_end()

    producer = asyncio.create_task(produce())
    try:
        while True:
            item = await out.get()
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            assert isinstance(item, ParsedDocument)
            yield item
    finally:
        pending = [producer, *tasks]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        for run in list(open_runs):   # stopped early: close what is still open
            close(run)
