"""The in-flight limit: a semaphore whose size may change while requests wait."""

from __future__ import annotations

import asyncio
import collections


class Limiter:
    """At most ``limit`` holders at once, first come first served.

    Lowering the limit never interrupts a holder: new ones wait until enough
    have left. Raising it admits waiters at once.
    """

    def __init__(self, limit: int) -> None:
        self._limit = max(1, limit)
        self.in_flight = 0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    @property
    def limit(self) -> int:
        return self._limit

    def set_limit(self, limit: int) -> None:
        self._limit = max(1, limit)
        self._wake()

    async def acquire(self) -> None:
        if self.in_flight < self._limit and not self._waiters:
            self.in_flight += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()   # admitted just as we were cancelled: give the slot back
            else:
                self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self._limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.in_flight += 1
                waiter.set_result(None)

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self.release()
