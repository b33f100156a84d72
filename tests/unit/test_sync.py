"""Ctrl-C reaches synchronous callers whichever thread the kernel hands SIGINT to.

The kernel gives a process's SIGINT to any thread not blocking it; Python runs the
handler (raising KeyboardInterrupt) only in the main thread, and only once that thread
wakes. ``ovisocr parse`` once ignored Ctrl-C in CI: its main thread waited, without a
timeout, for a document that a hanging page never finished.
"""

from __future__ import annotations

import asyncio
import gc
import signal
import sys
import threading
from collections.abc import AsyncIterator

import pytest

from ovisocr_loader._sync import iterate_sync, run_sync


def _interrupt_from_another_thread(started: threading.Event) -> threading.Thread:
    """Once ``started`` is set, a worker thread sends SIGINT to itself, not to main."""
    def send() -> None:
        started.wait(30)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


@pytest.mark.usefixtures("ctrl_c_raises")
def test_iterating_stops_on_a_sigint_delivered_to_another_thread():
    started = threading.Event()
    cancelled = threading.Event()

    async def never_yields() -> AsyncIterator[int]:
        started.set()
        try:
            await asyncio.sleep(30)   # the test fails on its own after that
        except asyncio.CancelledError:
            cancelled.set()
            raise
        yield 1

    sender = _interrupt_from_another_thread(started)
    with pytest.raises(KeyboardInterrupt):
        for _ in iterate_sync(never_yields):
            pass
    sender.join()
    assert cancelled.is_set()   # leaving the loop cancelled the generator


@pytest.mark.usefixtures("ctrl_c_raises")
def test_waiting_for_a_result_inside_a_running_loop_stops_on_such_a_sigint():
    started = threading.Event()
    cancelled = threading.Event()

    async def slow() -> int:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return 1

    async def caller() -> None:   # a running loop, as in Jupyter: run_sync uses a thread
        run_sync(slow)

    loop = asyncio.new_event_loop()   # no SIGINT handler of asyncio.run's: Python's own
    sender = _interrupt_from_another_thread(started)
    try:
        with pytest.raises(KeyboardInterrupt):
            loop.run_until_complete(caller())
    finally:
        loop.close()
    sender.join()
    assert cancelled.is_set()   # the private loop's work stopped with the caller


def test_run_sync_returns_the_result_and_raises_the_error_in_a_running_loop():
    async def answer() -> int:
        return 42

    async def fail() -> int:
        raise ValueError("from the worker loop")

    async def caller() -> int:
        with pytest.raises(ValueError, match="worker loop"):
            run_sync(fail)
        return run_sync(answer)

    assert asyncio.run(caller()) == 42
    assert run_sync(answer) == 42   # no running loop: asyncio.run


def test_iterating_ends_its_loop_as_asyncio_run_does():
    """What a library leaves on the private loop (a task, a half-read async generator,
    as HTTPX's streams are) is ended on that loop: nothing prints ``Event loop is
    closed`` when the garbage collector finds it later (issue #52)."""
    kept: list[object] = []
    finalised = threading.Event()
    left_cancelled = threading.Event()

    async def stream() -> AsyncIterator[int]:
        try:
            yield 1
            yield 2
        finally:
            await asyncio.sleep(0)
            finalised.set()

    async def forever() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            left_cancelled.set()
            raise

    async def items() -> AsyncIterator[str]:
        half_read = stream()
        await half_read.__anext__()
        kept.append(half_read)
        kept.append(asyncio.get_running_loop().create_task(forever()))
        yield "page"

    unraisable: list[object] = []
    hook, sys.unraisablehook = sys.unraisablehook, unraisable.append
    try:
        assert list(iterate_sync(items)) == ["page"]
        kept.clear()
        gc.collect()
    finally:
        sys.unraisablehook = hook
    assert finalised.is_set() and left_cancelled.is_set()
    assert unraisable == []
