"""The endpoints behind one parser: each request goes to the least busy healthy one.

The choice is a pure function (:func:`pick`); :class:`EndpointPool` keeps the
counts. An endpoint that fails its probe, or fails ``max_failures`` requests in a
row (connection errors, timeouts, a gateway's 502/503/504), is taken out and probed
again after a cooldown that doubles up to ``max_cooldown``.

A sick page is not a sick server. Any sign of life resets the count: an answer, and
also the first token of a stream (a long page proves the server alive long before it
ends). A 500 (or other 5xx from the server itself) is an answer about one request,
say an image its processor rejects: it is that page's error (retried as the retry
policy says) and never takes the endpoint out, which a probe would bring straight
back anyway. So pages the server always rejects, among healthy ones, pause nothing.

When every endpoint is out (one restarting vLLM server is the common case) the
run waits instead of burning retries: requests hold at :meth:`EndpointPool.acquire`
until a probe sees an endpoint answer again, for up to ``wait_for_any`` seconds
(``server_wait``) from the start of the outage; only then do they fail, all at
once and with one message. A failure of one page while other requests succeed
never counts as an outage: any success resets the count.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..config import HealthPolicy
from ..errors import (
    OvisLoaderError,
    ServerConnectionError,
    ServerStatusError,
    ServerTimeoutError,
    ServerUnreachableError,
)
from .transport import Transport

log = logging.getLogger("ovisocr_loader")


@dataclass(eq=False)
class Endpoint:
    """One server and what the pool knows about it."""

    transport: Transport
    outstanding: int = 0
    served: int = 0
    failures: int = 0
    down_until: float | None = None
    times_down: int = 0
    probing: bool = False
    #: this endpoint's share of the in-flight limit (adaptive or fixed)
    limit: int = 1
    #: answers received (the adaptive controller's measure of work done)
    completed: int = 0
    #: loop time of the last failure that hurt its health
    failed_at: float = -math.inf

    @property
    def url(self) -> str:
        return self.transport.base_url

    @property
    def up(self) -> bool:
        return self.down_until is None


def pick(endpoints: Sequence[Endpoint], avoid: Endpoint | None = None) -> Endpoint | None:
    """The up endpoint least loaded for its limit (then with the fewest requests
    outstanding, then the fewest served).

    ``avoid`` (where the previous try failed) is chosen only when nothing else is up.
    """
    up = [e for e in endpoints if e.up]
    others = [e for e in up if e is not avoid]
    candidates = others or up
    if not candidates:
        return None
    return min(candidates, key=lambda e: (e.outstanding / max(1, e.limit), e.outstanding,
                                          e.served))


#: statuses that say the server behind a gateway is away, not that a request failed
GATEWAY_STATUSES = frozenset({502, 503, 504})


def hurts_health(error: OvisLoaderError) -> bool:
    """Failures that say the server is unwell, not that one request was bad."""
    if isinstance(error, ServerStatusError):
        return error.status_code in GATEWAY_STATUSES
    return isinstance(error, (ServerConnectionError, ServerUnreachableError,
                              ServerTimeoutError))


class EndpointPool:
    """The endpoints of one session, their load and their health."""

    def __init__(self, transports: Sequence[Transport], health: HealthPolicy | None = None
                 ) -> None:
        if not transports:
            raise ValueError("need at least one endpoint")
        self.endpoints = [Endpoint(t) for t in transports]
        self.health = health or HealthPolicy()
        self._probes: set[asyncio.Task[None]] = set()
        self._outage_since: float | None = None

    @property
    def urls(self) -> str:
        return ", ".join(e.url for e in self.endpoints)

    async def probe(self) -> list[str]:
        """Probe every endpoint; take out those that do not answer; return served models.

        Raises when none answers (one endpoint: its own error, as without a pool).
        """
        if len(self.endpoints) == 1:
            return await self.endpoints[0].transport.probe()
        results = await asyncio.gather(*(e.transport.probe() for e in self.endpoints),
                                       return_exceptions=True)
        loop = asyncio.get_running_loop()
        models: list[str] | None = None
        errors: list[OvisLoaderError] = []
        for endpoint, result in zip(self.endpoints, results, strict=True):
            if isinstance(result, OvisLoaderError):
                errors.append(result)
                if hurts_health(result):
                    self._take_out(endpoint, loop.time(), result)
            elif isinstance(result, BaseException):
                raise result
            elif models is None:
                models = result
        if models is not None:
            return models
        if any(e.up for e in self.endpoints):   # they answer, but not /models: let caller decide
            raise errors[0]
        raise ServerUnreachableError(f"none of the endpoints answered: {self.urls}; "
                                     f"first error: {errors[0].reason}", url=self.urls)

    @property
    def in_outage(self) -> bool:
        """Every endpoint is out: requests wait for one to come back."""
        return not any(e.up for e in self.endpoints)

    async def acquire(self, avoid: Endpoint | None = None) -> Endpoint:
        """The endpoint for the next try; during an outage, wait for one to come back.

        Raises :class:`ServerUnreachableError` once the outage has lasted
        ``wait_for_any`` seconds (at once for every request still waiting).
        """
        loop = asyncio.get_running_loop()
        while True:
            self._probe_due(loop.time())
            endpoint = pick(self.endpoints, avoid)
            if endpoint is not None:
                endpoint.outstanding += 1
                endpoint.served += 1
                return endpoint
            if self._outage_since is None:
                self._outage_since = loop.time()
            waited = loop.time() - self._outage_since
            if waited >= self.health.wait_for_any:
                raise ServerUnreachableError(
                    f"no answer from {self.urls} for {self.health.wait_for_any:g}s "
                    f"(server_wait); gave up on the pages still waiting", url=self.urls)
            await asyncio.sleep(min(self.health.poll_interval,
                                    self.health.wait_for_any - waited))

    def release(self, endpoint: Endpoint) -> None:
        endpoint.outstanding -= 1

    def alive(self, endpoint: Endpoint, sent_at: float) -> None:
        """A sign of life (a first token) from a request sent at loop time ``sent_at``:
        if sent after the last failure, the failures so far were not the server's. An
        older request's tokens say nothing of now (they may be read from the socket's
        buffer after the server went away)."""
        if sent_at > endpoint.failed_at:
            endpoint.failures = 0

    def succeeded(self, endpoint: Endpoint, sent_at: float) -> None:
        self.alive(endpoint, sent_at)
        endpoint.completed += 1

    def failed(self, endpoint: Endpoint, error: OvisLoaderError) -> None:
        if not hurts_health(error):
            return
        endpoint.failures += 1
        endpoint.failed_at = asyncio.get_running_loop().time()
        if endpoint.up and endpoint.failures >= self.health.max_failures:
            self._take_out(endpoint, endpoint.failed_at, error)

    async def aclose(self) -> None:
        for task in self._probes:
            task.cancel()
        await asyncio.gather(*self._probes, return_exceptions=True)
        for endpoint in self.endpoints:
            await endpoint.transport.aclose()

    def _take_out(self, endpoint: Endpoint, now: float, error: OvisLoaderError) -> None:
        delay = min(self.health.max_cooldown,
                    self.health.cooldown * 2 ** endpoint.times_down)
        endpoint.times_down += 1
        endpoint.down_until = now + delay
        if endpoint.times_down > 1:
            return  # still out: its probe failed again
        if self.in_outage and self._outage_since is None:
            self._outage_since = now
            log.warning("lost the OvisOCR2 server (%s: %s); waiting up to %gs (server_wait) "
                        "for it to answer again", self.urls, error.reason,
                        self.health.wait_for_any)
        else:
            log.warning("endpoint %s taken out: %s", endpoint.url, error.reason)

    def _probe_due(self, now: float) -> None:
        for endpoint in self.endpoints:
            if endpoint.down_until is not None and endpoint.down_until <= now \
                    and not endpoint.probing:
                endpoint.probing = True
                task = asyncio.create_task(self._revive(endpoint))
                self._probes.add(task)
                task.add_done_callback(self._probes.discard)

    async def _revive(self, endpoint: Endpoint) -> None:
        try:
            await endpoint.transport.probe()
        except OvisLoaderError as exc:
            if hurts_health(exc):
                self._take_out(endpoint, asyncio.get_running_loop().time(), exc)
                return
        finally:
            endpoint.probing = False
        endpoint.down_until = None
        endpoint.failures = 0
        endpoint.times_down = 0
        if self._outage_since is not None:
            waited = asyncio.get_running_loop().time() - self._outage_since
            log.warning("%s answers again after %.0fs; resuming", endpoint.url, waited)
            self._outage_since = None
        else:
            log.warning("endpoint %s is back", endpoint.url)
