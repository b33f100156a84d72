"""The loop that runs the adaptive controller, one state per endpoint.

It samples each endpoint four times a second (requests in flight, pages finished,
answer text streamed) and the server's ``/metrics`` once a second, closing the
window at once on pressure; otherwise a window closes when :class:`~.window.Window`
says it is full. It then asks :func:`~.adaptive.decide` for the next limit and
applies it; each change is logged at INFO.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from .adaptive import AdaptivePolicy, ControllerState, decide, server_pressure
from .endpoints import Endpoint, EndpointPool
from .metrics import ServerLoad
from .window import Window

log = logging.getLogger("ovisocr_loader")
_SAMPLE_S = 0.25


class ConcurrencyTuner:
    """Adjusts every endpoint's limit; ``on_change`` gets the new total."""

    def __init__(self, pool: EndpointPool, policy: AdaptivePolicy,
                 on_change: Callable[[int], None]) -> None:
        self.pool = pool
        self.policy = policy
        self.on_change = on_change
        self.states = {id(e): ControllerState(policy.start) for e in pool.endpoints}
        for endpoint in pool.endpoints:
            endpoint.limit = policy.start

    @property
    def total(self) -> int:
        return sum(e.limit for e in self.pool.endpoints)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        loads = {id(e): await e.transport.load() for e in self.pool.endpoints}
        while True:
            started = loop.time()
            windows = {id(e): self._open(e, loads[id(e)]) for e in self.pool.endpoints}
            while True:
                await asyncio.sleep(_SAMPLE_S)
                for endpoint in self.pool.endpoints:
                    windows[id(endpoint)].sample(loop.time() - started, endpoint.outstanding,
                                                 endpoint.completed,
                                                 endpoint.transport.streamed_chars)
                first = next(iter(windows.values()))
                if first.metrics_due() and await self._pressure_now(windows):
                    break   # the server says too many: do not wait for the window to fill
                if all(window.full for window in windows.values()):
                    break
            for endpoint in self.pool.endpoints:   # the closing reading opens the next window
                loads[id(endpoint)] = await self._close(endpoint, windows[id(endpoint)])
            self.on_change(self.total)

    def _open(self, endpoint: Endpoint, load: ServerLoad | None) -> Window:
        return Window(endpoint.completed, endpoint.transport.streamed_chars,
                      _preemptions(load), self.policy)

    async def _pressure_now(self, windows: dict[int, Window]) -> bool:
        """Does any endpoint's server already say it has too many requests?"""
        for endpoint in self.pool.endpoints:
            if endpoint.outstanding > endpoint.limit:
                continue   # still draining the last limit: its pressure is old news
            load = await endpoint.transport.load()
            observation = windows[id(endpoint)].observe(
                endpoint.limit, load, _preemptions(load), endpoint.outstanding)
            if server_pressure(observation, self.policy) is not None:
                return True
        return False

    async def _close(self, endpoint: Endpoint, window: Window) -> ServerLoad | None:
        """Decide the endpoint's next limit; returns the server reading it used."""
        load = await endpoint.transport.load()
        observation = window.observe(endpoint.limit, load, _preemptions(load),
                                     endpoint.outstanding)
        decision = decide(self.states[id(endpoint)], observation, self.policy)
        if decision.limit != endpoint.limit:
            log.info("concurrency for %s: %d -> %d (%s)", endpoint.url, endpoint.limit,
                     decision.limit, decision.reason)
        endpoint.limit = decision.limit
        return load


def _preemptions(load: ServerLoad | None) -> float | None:
    return load.preemptions if load is not None else None
