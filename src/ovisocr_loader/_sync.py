"""Run the async core from synchronous code, also inside a running event loop.

``parse()`` must work in Jupyter, where a loop is already running in the
caller's thread: there the coroutine runs on a private loop in a worker thread
(never ``run_until_complete`` on the running loop).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

#: Ends a hand-off queue (the pipeline's documents, :func:`iterate_sync`'s items).
END = object()


def settle(item: object) -> bool:
    """The consumer side of a hand-off queue: True when ``item`` ends it, and an
    exception put on the queue is raised here, in the consumer."""
    if item is END:
        return True
    if isinstance(item, BaseException):
        raise item
    return False


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def run_sync(factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run ``factory()`` to completion and return its result."""
    if not _loop_running():
        return asyncio.run(factory())
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="ovisocr") as pool:
        return pool.submit(lambda: asyncio.run(factory())).result()


def iterate_sync(factory: Callable[[], AsyncIterator[T]]) -> Iterator[T]:
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
    thread = threading.Thread(target=loop.run_until_complete, args=(task,),
                              name="ovisocr-iter", daemon=True)
    thread.start()
    try:
        while True:
            item = items.get()
            if settle(item):
                return
            yield item
    finally:
        if not task.done():
            loop.call_soon_threadsafe(task.cancel)
        thread.join()
        loop.close()
