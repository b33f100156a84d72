"""The loop that runs the adaptive controller, one state per endpoint.

It samples each endpoint's requests in flight four times a second (and the
server's ``/metrics`` once a second, closing the window at once on pressure), closes a
window after ``window_s`` seconds once every slot of the limit has turned over
once (or after eight windows' time), reads the server's
``/metrics`` (when it has them), asks :func:`~.adaptive.decide` for the next
limit and applies it; each change is logged at INFO.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from .adaptive import (
    AdaptivePolicy,
    ControllerState,
    Observation,
    decide,
    server_pressure,
)
from .endpoints import Endpoint, EndpointPool
from .metrics import ServerLoad

log = logging.getLogger("ovisocr_loader")
_SAMPLE_S = 0.25


@dataclass
class _Window:
    """What one endpoint did since the window opened."""

    completed_at_start: int
    samples: int = 0
    in_flight_sum: float = 0.0
    preemptions_at_start: float | None = None


def windows_every_second(windows: dict[int, _Window]) -> bool:
    """True once a second of samples (the server's /metrics is read that often)."""
    samples = next(iter(windows.values())).samples if windows else 0
    return samples > 0 and samples % round(1 / _SAMPLE_S) == 0


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
            windows = {id(e): _Window(e.completed, preemptions_at_start=_preemptions(loads[id(e)]))
                       for e in self.pool.endpoints}
            while True:
                await asyncio.sleep(_SAMPLE_S)
                for endpoint in self.pool.endpoints:
                    window = windows[id(endpoint)]
                    window.samples += 1
                    window.in_flight_sum += endpoint.outstanding
                elapsed = loop.time() - started
                if windows_every_second(windows) and await self._pressure_now(windows):
                    break   # the server says too many: do not wait for the window to fill
                done = sum(e.completed - windows[id(e)].completed_at_start
                           for e in self.pool.endpoints)
                # every slot turned over once: a rate of this limit, not of the last
                enough = max(self.policy.min_completions, self.total)
                if elapsed >= self.policy.window_s and (
                        done >= enough or elapsed >= 8 * self.policy.window_s):
                    break
            for endpoint in self.pool.endpoints:   # the closing reading opens the next window
                loads[id(endpoint)] = await self._close(endpoint, windows[id(endpoint)],
                                                        loop.time() - started)
            self.on_change(self.total)

    async def _pressure_now(self, windows: dict[int, _Window]) -> bool:
        """Does any endpoint's server already say it has too many requests?"""
        for endpoint in self.pool.endpoints:
            if endpoint.outstanding > endpoint.limit:
                continue   # still draining the last limit: its pressure is old news
            load = await endpoint.transport.load()
            observation = _observe(endpoint, windows[id(endpoint)], load, seconds=1.0)
            if server_pressure(observation, self.policy) is not None:
                return True
        return False

    async def _close(self, endpoint: Endpoint, window: _Window, seconds: float
                     ) -> ServerLoad | None:
        """Decide the endpoint's next limit; returns the server reading it used."""
        load = await endpoint.transport.load()
        decision = decide(self.states[id(endpoint)],
                          _observe(endpoint, window, load, seconds), self.policy)
        if decision.limit != endpoint.limit:
            log.info("concurrency for %s: %d -> %d (%s)", endpoint.url, endpoint.limit,
                     decision.limit, decision.reason)
        endpoint.limit = decision.limit
        return load


def _preemptions(load: ServerLoad | None) -> float | None:
    return load.preemptions if load is not None else None


def _observe(endpoint: Endpoint, window: _Window, load: ServerLoad | None,
             seconds: float) -> Observation:
    """The window as the controller sees it (preemptions counted since it opened)."""
    now, start = _preemptions(load), window.preemptions_at_start
    preempted = max(0.0, now - start) if now is not None and start is not None else 0.0
    return Observation(limit=endpoint.limit, seconds=seconds,
                       completed=endpoint.completed - window.completed_at_start,
                       in_flight=window.in_flight_sum / max(1, window.samples), load=load,
                       preempted=preempted, outstanding=endpoint.outstanding)
