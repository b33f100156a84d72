"""Run the async core from synchronous code, also inside a running event loop.

``parse()`` must work in Jupyter, where a loop is already running in the
caller's thread: there the coroutine runs on a private loop in a worker thread
(never ``run_until_complete`` on the running loop).
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Generator
from typing import Any, TypeVar

T = TypeVar("T")

#: Ends a hand-off queue (the pipeline's documents, :func:`iterate_sync`'s items).
END = object()

#: How often a caller's thread waiting on the worker wakes to let Python run a signal
#: handler. Ctrl-C (SIGINT) goes to whichever thread of the process the kernel picks;
#: only a main thread that wakes notices it, and one blocked without a timeout on a lock
#: that no further item will release would wait forever.
SIGNAL_CHECK_S = 0.2


def settle(item: object) -> bool:
    """The consumer side of a hand-off queue: True when ``item`` ends it, and an
    exception put on the queue is raised here, in the consumer."""
    if item is END:
        return True
    if isinstance(item, BaseException):
        raise item
    return False


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, or None."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def run_sync(factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run ``factory()`` to completion and return its result.

    Inside a running loop it runs on a private loop in a worker thread, which Ctrl-C
    in the caller's thread cancels (see :func:`iterate_sync`).
    """
    if running_loop() is None:
        return asyncio.run(factory())

    async def once() -> AsyncIterator[T]:
        yield await factory()

    results = iterate_sync(once)
    try:
        return next(results)
    finally:
        results.close()


def iterate_sync(factory: Callable[[], AsyncIterator[T]]) -> Generator[T, None, None]:
    """Iterate an async generator from synchronous code, item by item.

    The generator runs on its own loop in a worker thread and hands items over
    a queue without ever blocking that loop (requests keep streaming while the
    caller works on an item). Closing the iterator early cancels the generator.
    """
    items: queue.SimpleQueue[Any] = queue.SimpleQueue()
    loop = asyncio.new_event_loop()

    async def pump() -> None:
        agen = factory()
        try:
            async for item in agen:
                items.put(item)
        except asyncio.CancelledError:
            pass
        except BaseException as exc:  # handed to the consumer thread, re-raised there
            items.put(exc)
            return
        finally:
            await agen.aclose()  # type: ignore[attr-defined]
        items.put(END)

    task = loop.create_task(pump())
    thread = threading.Thread(target=_run_to_end, args=(loop, task), name="ovisocr-iter",
                              daemon=True)
    try:
        thread.start()   # inside: Ctrl-C may come while it starts, the generator running
        while True:
            item = _next_item(items)
            if settle(item):
                return
            yield item
    finally:
        if not task.done():
            loop.call_soon_threadsafe(task.cancel)
        _join(thread)
        loop.close()


def _run_to_end(loop: asyncio.AbstractEventLoop, task: asyncio.Task[None]) -> None:
    """Run ``task``, then end the loop as :func:`asyncio.run` does: the tasks left
    cancelled, async generators finalised, the default executor shut down. A library's
    stream left for the garbage collector after its loop is closed would otherwise
    print ``RuntimeError: Event loop is closed`` at exit, after a good run."""
    try:
        loop.run_until_complete(task)
    finally:
        if left := asyncio.all_tasks(loop):
            for leftover in left:
                leftover.cancel()
            loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())


def _next_item(items: queue.SimpleQueue[Any]) -> Any:
    """The next item, waking every :data:`SIGNAL_CHECK_S` so that Ctrl-C is noticed."""
    while True:
        try:
            return items.get(timeout=SIGNAL_CHECK_S)
        except queue.Empty:
            continue


def _join(thread: threading.Thread) -> None:
    """Join ``thread``, also one whose ``start()`` Ctrl-C interrupted: it is running, and
    marks itself started a moment later (until then ``join`` refuses)."""
    for _ in range(1000):
        try:
            thread.join()
            return
        except RuntimeError:   # "cannot join thread before it is started"
            time.sleep(0.01)
