"""A parsing session: the settings, and the per-event-loop state every page shares.

One session per event loop holds the endpoints, the in-flight limit, the render
window and the cache, so that every concurrent call on that loop shares them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from typing import TYPE_CHECKING

from ..client.endpoints import EndpointPool
from ..client.limiter import Limiter
from ..client.page_client import PageClient, PageOutcome
from ..client.request import RequestRecipe
from ..client.transport import Transport
from ..client.tuner import ConcurrencyTuner
from ..document import PageResult
from ..errors import OvisLoaderError, ServerStatusError
from ..options import CacheLayout, ParserSettings
from ..sources import EncodedPage
from ..sources.render_workers import RenderWorkers
from .cache import PageCache, PageFiles, open_page_store, page_key, place_key, sent_key

if TYPE_CHECKING:
    from .page_step import PageJob

log = logging.getLogger("ovisocr_loader")

class Session:
    """Per-event-loop state: the endpoints, the in-flight limit, the render window."""

    def __init__(self, settings: ParserSettings) -> None:
        self.settings = settings
        self.pool = EndpointPool([Transport(url, settings.api_key, settings.timeouts)
                                  for url in settings.base_urls], settings.health)
        endpoints = self.pool.endpoints
        if settings.auto:
            for endpoint in endpoints:
                endpoint.limit = settings.adaptive.start
        else:
            share = max(1, int(settings.concurrency) // len(endpoints))
            for endpoint in endpoints:
                endpoint.limit = share
        total = sum(e.limit for e in endpoints) if settings.auto else int(settings.concurrency)
        #: requests in flight over every page of every document on this loop
        self.limiter = Limiter(total)
        #: pages rendered or in flight (the render window)
        self.window = Limiter(total + self._prefetch(total))
        #: inputs open at once over all calls on this loop: SimpleDirectoryReader.aload_data
        #: starts one parse per file, and each open PDF holds a file descriptor
        self.open_documents = Limiter(total + self._prefetch(total))
        self.tuner = ConcurrencyTuner(self.pool, settings.adaptive, self.set_total) \
            if settings.auto else None
        self._tuning: asyncio.Task[None] | None = None
        #: pages rendered at once: PDFium itself is serialised, PNG encoding is not
        self.renders = asyncio.Semaphore(max(1, min(4, os.cpu_count() or 1)))
        #: render processes for PDFs on disk; as many renders in flight as they take
        self.render_workers = RenderWorkers(settings.render_workers)
        self.worker_renders = asyncio.Semaphore(max(1, settings.render_workers))
        self.cache = open_cache(settings.cache_dir, settings.cache_layout,
                                settings.cache_max_bytes) if settings.cache_dir else None
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
                if self.tuner is not None:
                    self._tuning = asyncio.create_task(self.tuner.run())
            return self._client

    def _prefetch(self, total: int) -> int:
        given = self.settings.prefetch
        return given if given is not None else max(4, total // 2)

    def set_total(self, total: int) -> None:
        """A new in-flight limit (from the tuner); the render window follows it."""
        self.limiter.set_limit(total)
        self.window.set_limit(total + self._prefetch(total))
        self.open_documents.set_limit(total + self._prefetch(total))

    @property
    def concurrency(self) -> int:
        """The in-flight limit now."""
        return self.limiter.limit

    def recipe(self, model: str) -> RequestRecipe:
        """What every request of this session asks for (and what the cache key hashes)."""
        s = self.settings
        return RequestRecipe(model, s.guard, s.render.min_pixels, s.render.max_pixels,
                             s.prompt)

    async def _resolve_model(self) -> str:
        try:
            models = await self.pool.probe()
        except ServerStatusError as exc:
            if self.settings.model:  # some gateways do not serve /models
                log.debug("GET /models failed (%s); using model=%s", exc, self.settings.model)
                return self.settings.model
            raise
        wanted = self.settings.model
        if wanted and wanted not in models:
            served = ", ".join(models) or "none"
            raise ServerStatusError(f"model {wanted!r} is not served at {self.pool.urls}; it "
                                    f"serves: {served}", status_code=404, url=self.pool.urls)
        if wanted:
            return wanted
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

    async def sent_key(self, page: EncodedPage) -> str | None:
        """The cache key of what is sent for ``page`` (see :func:`.cache.sent_key`)."""
        if self.cache is None:
            return None
        model = self.settings.model or (await self.ready()).recipe.model
        geometry = (page.page_size_pt, page.dpi, page.rotation, page.width, page.height)
        return await asyncio.to_thread(sent_key, page.data_url, geometry, self.recipe(model))

    def place(self, path: str | None, page_number: int) -> str | None:
        """The cache's name for a page of a file on disk (None without either)."""
        return place_key(path, page_number) if self.cache is not None and path else None

    async def remember(self, job: PageJob, sent: str | None, result: PageResult) -> None:
        """Store a finished page under both its keys, as the last good page at its place."""
        cache = self.cache
        if cache is None or result.error is not None or self._simulated_into_default():
            return

        def store() -> None:
            stored = sent or job.key
            if stored is None:
                return
            cache.put(stored, job.sha256, result)
            for name in (job.key, job.place):
                if name is not None and name != stored:
                    cache.alias(name, stored)

        await asyncio.to_thread(store)

    def _simulated_into_default(self) -> bool:
        """A simulated server's made-up pages stay out of the user's default cache: a
        later run of the same scans against a real server would read them back."""
        return self.settings.cache_default and any(
            e.transport.simulated for e in self.pool.endpoints)

    async def keep_place(self, job: PageJob, key: str | None) -> None:
        """Note a page served from the cache as the last good page at its place."""
        cache = self.cache
        if cache is not None and job.place is not None and key is not None:
            await asyncio.to_thread(cache.alias, job.place, key)

    async def ocr(self, data_url: bytes) -> PageOutcome:
        """Every request for one page image (a ``data:`` URL), under the in-flight limit."""
        client = await self.ready()
        async with self.limiter:
            return await client.run(data_url)

    async def aclose(self) -> None:
        await self.render_workers.aclose()
        if self._tuning is not None:
            self._tuning.cancel()
            await asyncio.gather(self._tuning, return_exceptions=True)
        await self.pool.aclose()
        if self.cache is not None:
            self.cache.close()


def open_cache(directory: str, layout: CacheLayout = "sqlite", max_bytes: int | None = None
               ) -> PageCache | PageFiles | None:
    """The page cache, or None (one warning) when the folder cannot hold one."""
    try:
        return open_page_store(directory, layout, max_bytes)
    except (OSError, sqlite3.Error) as exc:
        log.warning("cannot use %s as a cache (%s: %s); left as it is, running without a "
                    "cache",
                    directory, type(exc).__name__, exc)
        return None

