"""OvisParser: the public entry point of the core. Wiring, little logic.

Written once, async (``aparse``/``aparse_many``); the sync twins bridge to it.
The parser holds settings only: it touches the network lazily, on first use, and
keeps one session (HTTP client, in-flight limit) per running event loop, so that
every concurrent call on that loop shares one limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from types import TracebackType
from typing import Any, Literal

from ._engine.cache import PageCache, PageFiles, place_key
from ._engine.scheduler import parse_documents
from ._engine.session import Session, open_cache
from ._sync import iterate_sync, run_sync
from .config import GuardPolicy, HealthPolicy, RetryPolicy
from .document import PageResult, ParsedDocument
from .jobs import DocumentJob, ProgressCallback
from .options import (
    DEFAULTS,
    Auto,
    CacheLayout,
    ErrorMode,
    FigureMode,
    Orientation,
    ParseOptions,
    ParserSettings,
)
from .sources import Source


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

    Finished pages are kept in a cache, on by default in the user cache folder
    (``cache_dir`` or ``$OVISOCR_CACHE_DIR`` moves it, ``cache_dir=False`` turns it
    off), keyed by what was sent (the page image and every request setting): a
    rerun sends no OCR request (with ``model`` set, none at all), a run killed
    midway resumes where it stopped, and an edited file costs only its changed
    pages. It holds at most ``cache_max_mb``, dropping the pages used longest ago.
    ``cache_layout="files"`` keeps one JSON file per page instead of one sqlite
    file, for a folder shared by several machines.

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
        base_url: str | Sequence[str] | None = DEFAULTS.base_url,
        api_key: str | None = DEFAULTS.api_key,
        model: str | None = DEFAULTS.model,
        dpi: float = DEFAULTS.dpi,
        concurrency: int | Auto = DEFAULTS.concurrency,
        *,
        first_token_timeout: float = DEFAULTS.first_token_timeout,
        page_timeout: float = DEFAULTS.page_timeout,
        connect_timeout: float = DEFAULTS.connect_timeout,
        retry: RetryPolicy | None = DEFAULTS.retry,
        guard: GuardPolicy | None = DEFAULTS.guard,
        errors: ErrorMode = DEFAULTS.errors,
        figures: FigureMode = DEFAULTS.figures,
        figures_dir: str | os.PathLike[str] | None = DEFAULTS.figures_dir,
        prefetch: int | None = DEFAULTS.prefetch,
        health: HealthPolicy | None = DEFAULTS.health,
        cache_dir: str | os.PathLike[str] | Literal[False] | None = DEFAULTS.cache_dir,
        cache_layout: CacheLayout = DEFAULTS.cache_layout,
        cache_max_mb: int = DEFAULTS.cache_max_mb,
        server_wait: float | None = DEFAULTS.server_wait,
        max_concurrency: int = DEFAULTS.max_concurrency,
        orientation: Orientation = DEFAULTS.orientation,
        prompt: str | None = DEFAULTS.prompt,
        render_workers: int | Auto = DEFAULTS.render_workers,
    ) -> None:
        given = {name: value for name, value in locals().items() if name != "self"}
        self._adopt(ParseOptions(**given))

    @classmethod
    def from_options(cls, options: ParseOptions, *, workers: int = 1) -> OvisParser:
        """A parser for options already validated (an ``OvisReader`` is one); with
        ``workers``, for one of that many processes sharing the limits."""
        parser = cls.__new__(cls)
        own = ParseOptions.model_construct(**{name: getattr(options, name)
                                              for name in ParseOptions.model_fields})
        parser._adopt(own, workers)
        return parser

    def share(self, workers: int) -> OvisParser:
        """A parser with this one's options for one of ``workers`` processes that share
        its limits: each takes its part of ``concurrency`` (see ``concurrency_share``)."""
        return self.from_options(self.options, workers=workers)

    def _adopt(self, options: ParseOptions, workers: int = 1) -> None:
        self.options = options
        self.settings = options.settings(workers)
        self._sessions: dict[asyncio.AbstractEventLoop, tuple[Session, int]] = {}
        self._held: dict[asyncio.AbstractEventLoop, list[contextlib.AsyncExitStack]] = {}
        self._store: PageCache | PageFiles | None = None

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

    def last_good(self, source: str, page_number: int) -> PageResult | None:
        """The last page the cache holds as read well at this page of the file ``source``
        (None without a cache, or when none was): what an index should keep when that
        page fails now (the integrations do so)."""
        if self.settings.cache_dir is None or not source or source.startswith("<"):
            return None
        if self._store is None:
            self._store = open_cache(self.settings.cache_dir, self.settings.cache_layout)
        return None if self._store is None else self._store.get(place_key(source, page_number))

    def __getstate__(self) -> dict[str, Any]:
        return {"options": self.options, "settings": self.settings}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.options, self.settings = state["options"], state["settings"]
        self._sessions, self._held, self._store = {}, {}, None

    async def __aenter__(self) -> OvisParser:
        """Hold this event loop's session (connections, adaptive limit, cache, render
        processes) open until :meth:`aclose`: what a long-lived worker wants. Calls in
        between share it instead of opening and closing their own."""
        stack = contextlib.AsyncExitStack()
        await stack.enter_async_context(self._session())
        self._held.setdefault(asyncio.get_running_loop(), []).append(stack)
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Let go of the session :meth:`__aenter__` held on this loop (closed once no
        call uses it); a no-op when none is held."""
        held = self._held.get(asyncio.get_running_loop())
        if held:
            await held.pop().aclose()

    def _session(self) -> _SessionUse:
        """The session of the running loop, shared by concurrent calls, closed by the last."""
        return _SessionUse(self._sessions, self.settings)

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
        async with self._session() as session, contextlib.aclosing(parse_documents(
                session, [job], raise_source_errors=True, on_event=on_event)) as docs:
            async for doc in docs:
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
        async with self._session() as session, \
                contextlib.aclosing(parse_documents(session, jobs, on_event=on_event)) as docs:
            async for doc in docs:
                yield doc

    def parse_many(self, sources: Iterable[Source | DocumentJob], *,
                   password: str | None = None,
                   on_event: ProgressCallback | None = None) -> Iterator[ParsedDocument]:
        """Synchronous :meth:`aparse_many`: documents are yielded as they finish."""
        return iterate_sync(lambda: self.aparse_many(sources, password=password,
                                                     on_event=on_event))


class _SessionUse:
    """One call's use of its loop's session (``async with``); the last use closes it.

    A class, not an async generator: a caller that leaves an ``async for`` over a
    loader early leaves its generators for ``asyncio.run`` to close, all at once, and
    a generator-based context manager inside them would be closed twice at the same
    time ("aclose(): asynchronous generator is already running", printed after a good
    run). For the same reason each generator closes the one it reads (``aclosing``).
    """

    def __init__(self, sessions: dict[asyncio.AbstractEventLoop, tuple[Session, int]],
                 settings: ParserSettings) -> None:
        self.sessions, self.settings = sessions, settings

    async def __aenter__(self) -> Session:
        loop = asyncio.get_running_loop()
        session, users = self.sessions.get(loop, (None, 0))
        if session is None:
            session = Session(self.settings)
        self.sessions[loop] = (session, users + 1)
        return session

    async def __aexit__(self, *exc_info: object) -> None:
        loop = asyncio.get_running_loop()
        current, users = self.sessions[loop]
        if users > 1:
            self.sessions[loop] = (current, users - 1)
            return
        del self.sessions[loop]
        await current.aclose()
