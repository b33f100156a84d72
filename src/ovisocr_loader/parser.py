"""OvisParser: the public entry point of the core. Wiring, little logic.

Written once, async (``aparse``/``aparse_many``); the sync twins bridge to it.
The parser holds settings only: it touches the network lazily, on first use, and
keeps one session (HTTP client, in-flight limit) per running event loop, so that
every concurrent call on that loop shares one limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import urllib.parse
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from typing import Any, Literal

from ._sync import iterate_sync, run_sync
from .cache import CacheLayout
from .client.adaptive import AdaptivePolicy
from .client.request import resolve_prompt
from .config import GuardPolicy, HealthPolicy, RenderSettings, RetryPolicy, Timeouts
from .document import ParsedDocument
from .paths import user_path
from .pipeline import DocumentJob, ProgressCallback, parse_documents
from .session import ErrorMode, FigureMode, ParserSettings, Session
from .sources import Source
from .sources.orientation import require_classifier

DEFAULT_BASE_URL = "http://localhost:8000/v1"


def resolve_base_urls(base_url: str | Sequence[str] | None) -> tuple[str, ...]:
    """One URL, several, or ``OVISOCR_BASE_URL`` (comma-separated for several)."""
    if base_url is None:
        base_url = os.environ.get("OVISOCR_BASE_URL") or DEFAULT_BASE_URL
    urls = [base_url] if isinstance(base_url, str) else list(base_url)
    urls = [u.strip() for item in urls for u in item.split(",") if u.strip()]
    if not urls:
        raise ValueError("base_url is empty")
    for url in urls:
        _check_url(url)
    return tuple(dict.fromkeys(urls))


def _check_url(url: str) -> None:
    """An http(s) URL with a host and no credentials in it (they would end up in logs)."""
    parts = urllib.parse.urlsplit(url)
    shown = parts._replace(netloc=parts.hostname or "").geturl() if parts.password else url
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"base_url must be an http(s) URL such as http://localhost:8000/v1, "
                         f"got {shown!r}")
    if parts.username or parts.password:
        raise ValueError(f"base_url {shown!r} holds credentials; pass api_key= (or set "
                         "OVISOCR_API_KEY) instead")


def _with_server_wait(health: HealthPolicy, server_wait: float | None) -> HealthPolicy:
    return health if server_wait is None else dataclasses.replace(health,
                                                                  wait_for_any=server_wait)


class OvisParser:
    """Parse scanned PDFs and page images into per-page Markdown with OvisOCR2.

    Example::

        parser = OvisParser(base_url="http://gpu-box:8000/v1")
        doc = parser.parse("scan.pdf")
        for page in doc.pages:
            print(page.page_number, page.markdown[:80])

    ``base_url``, ``api_key`` and ``model`` default to ``OVISOCR_BASE_URL``,
    ``OVISOCR_API_KEY`` and ``OVISOCR_MODEL``; without a model the first one the
    server lists is used. ``concurrency`` (default 32, the measured throughput
    elbow of one RTX 5090) bounds requests in flight across every page of every
    document parsed by this parser on one event loop.

    ``base_url`` may be a list of endpoints (one model on several GPUs): each
    request goes to the healthy endpoint with the fewest requests outstanding,
    and an endpoint that stops answering is taken out and probed again later.
    ``concurrency`` is then the total over all endpoints (e.g. 64 for two GPUs).

    ``cache_dir`` keeps finished pages in a sqlite file there, keyed by content:
    a rerun sends no OCR request (with ``model`` set, none at all) and a run
    killed midway resumes where it stopped. ``cache_layout="files"`` keeps one
    JSON file per page instead, for a folder shared by several machines.

    A server that stops answering mid-run (a restart, an OOM) puts the run on
    hold: pages wait for it, up to ``server_wait`` seconds (default 600, or the
    ``health`` policy's ``wait_for_any``), and only then become recorded errors.

    ``orientation="auto"`` (the ``orientation`` extra) turns pages whose content is
    sideways or upside down upright before sending them; ``PageResult.rotation``
    records the turn, figure ``bbox`` stays in the frame of the image sent and
    ``pixel_bbox``/``pdf_bbox`` are on the page as stored.

    ``figures="crop"`` attaches a PNG crop of every figure to its element
    (``image_png``) and, with ``figures_dir``, writes it there (``image_path``);
    crops are cut while the page image is in flight, so no page image is kept.

    ``prompt`` replaces OvisOCR2's prompt, to run another document VLM served the
    same way: a name from ``PROMPTS`` (``"glm-ocr"``) or the text itself. The rest
    of the request stays OvisOCR2's contract (docs/eval.md says what that means).

    ``render_workers`` processes render the pages of PDFs on disk, each with its own
    PDFium, so rendering scales with cores and leaves the event loop alone (0, the
    default: threads). Worker processes are spawned: they import the calling script
    again, so a script needs the ``if __name__ == "__main__":`` guard;
    ``default_render_workers()`` is what ``ovisocr`` uses (the cores beyond two).
    """

    def __init__(
        self,
        base_url: str | Sequence[str] | None = None,
        api_key: str | None = None,
        model: str | None = None,
        dpi: float = 150,
        concurrency: int | Literal["auto"] = "auto",
        *,
        first_token_timeout: float = 120.0,
        page_timeout: float = 900.0,
        connect_timeout: float = 5.0,
        retry: RetryPolicy | None = None,
        guard: GuardPolicy | None = None,
        errors: ErrorMode = "record",
        figures: FigureMode = "keep",
        figures_dir: str | os.PathLike[str] | None = None,
        prefetch: int | None = None,
        health: HealthPolicy | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        cache_layout: CacheLayout = "sqlite",
        server_wait: float | None = None,
        max_concurrency: int = 256,
        orientation: Literal["off", "auto"] = "off",
        prompt: str | None = None,
        render_workers: int = 0,
    ) -> None:
        if concurrency != "auto" and (not isinstance(concurrency, int) or concurrency < 1):
            raise ValueError(f'concurrency must be "auto" or an int >= 1, got {concurrency!r}')
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        if orientation == "auto":
            require_classifier()   # the extra, named now rather than at the first page
        if cache_layout not in ("sqlite", "files"):
            raise ValueError('cache_layout must be "sqlite" or "files"')
        if errors not in ("record", "raise"):
            raise ValueError('errors must be "record" or "raise"')
        if render_workers < 0:
            raise ValueError("render_workers must be 0 (threads only) or more")
        self.settings = ParserSettings(
            base_urls=resolve_base_urls(base_url),
            api_key=api_key or os.environ.get("OVISOCR_API_KEY"),
            model=model or os.environ.get("OVISOCR_MODEL"),
            render=RenderSettings(dpi=dpi, orientation=orientation),
            concurrency=concurrency,
            prefetch=prefetch,
            timeouts=Timeouts(first_token=first_token_timeout, page=page_timeout,
                              connect=connect_timeout),
            retry=retry or RetryPolicy(),
            guard=guard or GuardPolicy(),
            errors=errors,
            figures=figures,
            figures_dir=user_path(figures_dir) if figures_dir is not None else None,
            health=_with_server_wait(health or HealthPolicy(), server_wait),
            cache_dir=user_path(cache_dir) if cache_dir is not None else None,
            cache_layout=cache_layout,
            adaptive=AdaptivePolicy(start=min(16, max_concurrency), maximum=max_concurrency),
            prompt=resolve_prompt(prompt),
            render_workers=render_workers,
        )
        self._sessions: dict[asyncio.AbstractEventLoop, tuple[Session, int]] = {}

    def __repr__(self) -> str:
        s = self.settings
        urls = s.base_urls[0] if len(s.base_urls) == 1 else list(s.base_urls)
        return (f"OvisParser(base_url={urls!r}, model={s.model!r}, dpi={s.render.dpi:g}, "
                f"concurrency={s.concurrency!r})")

    @property
    def concurrency_now(self) -> int | None:
        """The in-flight limit of a running parse (adaptive or fixed), or None when idle."""
        sessions = [session for session, _ in list(self._sessions.values())]
        return sum(s.concurrency for s in sessions) if sessions else None

    def __getstate__(self) -> dict[str, Any]:
        return {"settings": self.settings}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.settings = state["settings"]
        self._sessions = {}

    @contextlib.asynccontextmanager
    async def _session(self) -> AsyncIterator[Session]:
        """The session of the running loop, shared by concurrent calls, closed by the last."""
        loop = asyncio.get_running_loop()
        session, users = self._sessions.get(loop, (None, 0))
        if session is None:
            session = Session(self.settings)
        self._sessions[loop] = (session, users + 1)
        try:
            yield session
        finally:
            current, users = self._sessions[loop]
            if users <= 1:
                del self._sessions[loop]
                await current.aclose()
            else:
                self._sessions[loop] = (current, users - 1)

    async def acheck(self) -> str:
        """Probe the endpoint(s) now and return the model pages will be sent to.

        Raises what the first parse would: an unreachable server, a ``model`` the
        server does not serve (the message lists the served ones), an answer that
        is not an OpenAI API. Sends no page.
        """
        async with self._session() as session:
            return (await session.ready()).recipe.model

    def check(self) -> str:
        """Synchronous :meth:`acheck`."""
        return run_sync(self.acheck)

    async def aparse(self, source: Source, *, password: str | None = None,
                     pages: Sequence[int] | None = None, name: str | None = None,
                     on_event: ProgressCallback | None = None) -> ParsedDocument:
        """Parse one PDF or image; bad input raises a SourceError naming the file.

        ``pages`` selects 1-based page numbers; ``name`` labels bytes or streams.
        """
        job = DocumentJob(source, password, pages, name)
        async with self._session() as session:
            async for doc in parse_documents(session, [job], raise_source_errors=True,
                                             on_event=on_event):
                return doc
        raise RuntimeError("the pipeline ended without a document")  # pragma: no cover

    def parse(self, source: Source, *, password: str | None = None,
              pages: Sequence[int] | None = None, name: str | None = None,
              on_event: ProgressCallback | None = None) -> ParsedDocument:
        """Synchronous :meth:`aparse`; safe inside a running event loop (Jupyter)."""
        return run_sync(lambda: self.aparse(source, password=password, pages=pages, name=name,
                                            on_event=on_event))

    async def aparse_many(self, sources: Iterable[Source | DocumentJob], *,
                          password: str | None = None,
                          on_event: ProgressCallback | None = None
                          ) -> AsyncIterator[ParsedDocument]:
        """Parse many inputs through one in-flight limit; yield documents as they finish.

        Documents come in completion order; match them by ``doc.source``. With
        ``errors="record"`` an unreadable input yields a document whose ``error``
        is set; with ``errors="raise"`` it raises.
        """
        jobs = (s if isinstance(s, DocumentJob) else DocumentJob(s, password) for s in sources)
        async with self._session() as session:
            async for doc in parse_documents(session, jobs, on_event=on_event):
                yield doc

    def parse_many(self, sources: Iterable[Source | DocumentJob], *,
                   password: str | None = None,
                   on_event: ProgressCallback | None = None) -> Iterator[ParsedDocument]:
        """Synchronous :meth:`aparse_many`: documents are yielded as they finish."""
        return iterate_sync(lambda: self.aparse_many(sources, password=password,
                                                     on_event=on_event))
