"""The loop that runs the adaptive controller, one state per endpoint.

It samples each endpoint's requests in flight four times a second, closes a
window after ``window_s`` seconds once every slot of the limit has turned over
twice (or after eight windows' time), reads the server's
``/metrics`` (when it has them), asks :func:`~.adaptive.decide` for the next
limit and applies it; each change is logged at INFO.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from .adaptive import AdaptivePolicy, ControllerState, Decision, Observation, decide
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
        self.history: list[tuple[str, Decision]] = []

    @property
    def total(self) -> int:
        return sum(e.limit for e in self.pool.endpoints)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            started = loop.time()
            windows = {id(e): await self._open(e) for e in self.pool.endpoints}
            while True:
                await asyncio.sleep(_SAMPLE_S)
                for endpoint in self.pool.endpoints:
                    window = windows[id(endpoint)]
                    window.samples += 1
                    window.in_flight_sum += endpoint.outstanding
                elapsed = loop.time() - started
                done = sum(e.completed - windows[id(e)].completed_at_start
                           for e in self.pool.endpoints)
                # every slot turned over twice: a rate measured at this limit, not the last
                enough = max(self.policy.min_completions, 2 * self.total)
                if elapsed >= self.policy.window_s and (
                        done >= enough or elapsed >= 8 * self.policy.window_s):
                    break
            for endpoint in self.pool.endpoints:
                await self._close(endpoint, windows[id(endpoint)], loop.time() - started)
            self.on_change(self.total)

    async def _open(self, endpoint: Endpoint) -> _Window:
        load = await endpoint.transport.load()
        return _Window(endpoint.completed,
                       preemptions_at_start=load.preemptions if load is not None else None)

    async def _close(self, endpoint: Endpoint, window: _Window, seconds: float) -> None:
        load: ServerLoad | None = await endpoint.transport.load()
        preempted = 0.0
        if load is not None and load.preemptions is not None and \
                window.preemptions_at_start is not None:
            preempted = max(0.0, load.preemptions - window.preemptions_at_start)
        observation = Observation(
            limit=endpoint.limit, seconds=seconds,
            completed=endpoint.completed - window.completed_at_start,
            in_flight=window.in_flight_sum / max(1, window.samples), load=load,
            preempted=preempted)
        decision = decide(self.states[id(endpoint)], observation, self.policy)
        if decision.limit != endpoint.limit:
            log.info("concurrency for %s: %d -> %d (%s)", endpoint.url, endpoint.limit,
                     decision.limit, decision.reason)
        self.history.append((endpoint.url, decision))
        endpoint.limit = decision.limit
