"""One page, start to finish: render, blank check, cache, OCR, parse, crops.

The one place that builds a :class:`PageResult`. Whatever goes wrong with a
page's own input (a frame that will not decode, Markdown that trips the parser)
ends as that page's recorded error or as plain text, never as an exception that
stops the batch; only the session's own failures (no server at all) propagate.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from ..document import PageErrorInfo, PageResult, renumbered
from ..elements import parse_page_or_text
from ..elements.crops import crop_figures
from ..errors import CorruptFileError, OvisLoaderError, SourceError
from ..sources import EncodedPage, PageSource, PdfSource
from ..sources.render import render_page
from .session import Session

log = logging.getLogger("ovisocr_loader")


@dataclass
class PageJob:
    """A page to produce, from an open source."""

    source: PageSource
    name: str
    sha256: str
    number: int
    #: the page's cache key by file content (None without a cache)
    key: str | None = None
    #: where the page sits on disk, for the cache's last good page there
    place: str | None = None


@dataclass
class PageDone:
    """A finished page, and the error of its last try when it failed (for ``raise ... from``)."""

    result: PageResult
    cause: OvisLoaderError | None = None


async def cached_page(session: Session, job: PageJob) -> PageDone | None:
    """The page from the cache (its figure crops cut again if asked), or None."""
    hit = await session.lookup(job.key)
    if hit is None:
        return None
    hit = renumbered(hit, job.number)   # one stored copy may serve several pages
    await session.keep_place(job, job.key)
    if _wants_crops(session, hit):
        try:
            await _crop(session, job, await render(session, job), hit)
        except SourceError as exc:
            return PageDone(_failed(job.number, exc), exc)
    return PageDone(hit)


async def produce_page(session: Session, job: PageJob) -> PageDone:
    """Render the page and, unless it is blank or was sent before (the same image, in
    this file or another), read it with the model."""
    try:
        page = await render(session, job)
    except SourceError as exc:
        return PageDone(_failed(job.number, exc), exc)
    sent = await session.sent_key(page)
    hit = await session.lookup(sent)
    if hit is not None:
        done = PageDone(renumbered(hit, job.number))
        await _crop(session, job, page, done.result)
    elif page.blank:  # the model invents text on blank pages: never send them
        width, height = page.stored_size
        done = PageDone(PageResult(page_number=job.number, blank=True, width=width,
                                   height=height, dpi=page.dpi, page_size_pt=page.page_size_pt))
    else:
        done = await _read(session, job, page)
    await session.remember(job, sent, done.result)
    return done


async def render(session: Session, job: PageJob) -> EncodedPage:
    """Render one page in a worker process (a PDF on disk, when there are workers) or a
    worker thread; any failure is that page's CorruptFileError."""
    workers, settings = session.render_workers, session.settings.render
    try:
        if workers.takes(job.source):
            assert isinstance(job.source, PdfSource)
            async with session.worker_renders:
                return await workers.render(job.source, job.number, settings)
        async with session.renders:
            return await asyncio.to_thread(render_page, job.source, job.number, settings)
    except SourceError:
        raise
    except Exception as exc:  # a decoder's own exception on hostile input
        raise CorruptFileError(f"cannot render page ({type(exc).__name__}: {exc})",
                               file=job.name, page=job.number) from exc


async def _read(session: Session, job: PageJob, page: EncodedPage) -> PageDone:
    outcome = await session.ocr(page.data_url)
    width, height = page.stored_size
    # parsed in a worker thread: ~0.5 ms a page the event loop keeps for the streams
    elements = await asyncio.to_thread(
        parse_page_or_text, outcome.markdown, page.page_number, width=width, height=height,
        page_size_pt=page.page_size_pt, rotation=page.rotation, name=job.name)
    result = PageResult(
        page_number=page.page_number, markdown=outcome.markdown, width=width, height=height,
        dpi=page.dpi, page_size_pt=page.page_size_pt, rotation=page.rotation,
        loop_trimmed=outcome.loop_trimmed, truncated=outcome.truncated,
        error=outcome.error, attempts=outcome.attempts, elements=elements)
    await _crop(session, job, page, result)
    return PageDone(result, outcome.exception)


def _wants_crops(session: Session, result: PageResult) -> bool:
    return session.settings.figures == "crop" and any(e.kind == "figure"
                                                      for e in result.elements)


async def _crop(session: Session, job: PageJob, page: EncodedPage, result: PageResult) -> None:
    """Figure crops from the image in hand, when the run asks for them."""
    if _wants_crops(session, result):
        await asyncio.to_thread(crop_figures, page.png, result.elements,
                                session.settings.figures_dir, job.sha256, page.page_number,
                                page.rotation)


def _failed(number: int, exc: SourceError) -> PageResult:
    return PageResult(page_number=number, error=PageErrorInfo.from_exception(exc))
