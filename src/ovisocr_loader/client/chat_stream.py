"""The streamed chat-completions request over aiohttp itself, read in gathered reads.

vLLM sends one server-sent event per token by default: ~600 network reads a page.
Through openai-python's client each read climbs five iterator layers (openai, HTTPX2,
the aiohttp adapter); here it is one ``readany``. And after each read the socket is
left unread for a while (``pause_reading``, see :class:`ReadPacing`): the events that
arrive meanwhile wait in the kernel and come in with the next read, many tokens for
the price of one wake-up, at a bounded cost in how late a page's end is seen.
Measured: docs/benchmarks.md.

Errors are mapped to the package's own here, as :func:`transport._mapped_errors`
does for the openai client (probes still use it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from typing import Protocol

import aiohttp

from ..config import Timeouts
from ..errors import (
    OvisLoaderError,
    ServerConnectionError,
    ServerProtocolError,
    ServerStatusError,
    ServerTimeoutError,
)
from . import sse
from .retry import parse_retry_after

_ERROR_BODY_BYTES = 64 * 1024
#: the response header by which the package's own simulator says its answers are made up
SIMULATED_HEADER = "X-Ovisocr-Simulated"
_JSON = {"Content-Type": "application/json"}


def new_session(timeouts: Timeouts, api_key: str | None) -> aiohttp.ClientSession:
    """One session per endpoint and event loop: connect bounded, reads bounded by the
    stream's own first-token and page timers (no timer armed per read)."""
    return aiohttp.ClientSession(
        timeout=aiohttp.ClientTimeout(total=None, sock_connect=timeouts.connect),
        connector=aiohttp.TCPConnector(limit=0, force_close=False),
        headers={"Authorization": f"Bearer {api_key or 'EMPTY'}",
                 "Accept": "text/event-stream"})


class ReadPacing:
    """How long a stream's socket rests after each read.

    Each read wakes the event loop (selector, transport, aiohttp, the reading task):
    ~75 us with 64 streams open on a 2-core machine, more than parsing its events
    costs. Resting the socket lets the tokens of the meantime arrive in one read. The
    rest grows with the streams open, ``PER_STREAM_S`` each, so that together they
    wake the loop about every ``PER_STREAM_S`` (64 streams: 0.38 s); none waits more
    than ``MAX_S``.

    A rest also delays seeing the page end (half a rest on average), and the slot is
    given back that much later; on a fast GPU a page takes ~1.5 s, so a 0.19 s rest
    would cost the server ~6% of its time. So a rest is also at most ``PAGE_SHARE``
    of the time pages take on this endpoint (a running mean): the cost stays near
    ``PAGE_SHARE / 2`` of the GPU on any server, for ~1/``PAGE_SHARE`` reads a page.
    A stream whose reads bring one event each (the server groups tokens itself, as
    with vLLM's ``--stream-interval``) is not rested at all: resting it would gather
    nothing and only delay.
    """

    PER_STREAM_S = 0.006
    MIN_S = 0.005
    MAX_S = 0.5
    PAGE_SHARE = 0.03
    #: reads a stream is rested before its events per read are judged
    TRIAL_READS = 4

    def __init__(self) -> None:
        self.open = 0
        self.page_s: float | None = None

    @contextlib.contextmanager
    def stream(self) -> Iterator[StreamPace]:
        """One stream, counted as open while it is read; a stream that ends on its own
        adds its duration to the mean page time."""
        self.open += 1
        pace = StreamPace(self, asyncio.get_running_loop().time())
        try:
            yield pace
        finally:
            self.open -= 1
        if pace.ended:
            self.page_ended(asyncio.get_running_loop().time() - pace.started)

    def page_ended(self, seconds: float) -> None:
        self.page_s = seconds if self.page_s is None else 0.9 * self.page_s + 0.1 * seconds

    def rest_s(self) -> float:
        rest = min(self.MAX_S, self.open * self.PER_STREAM_S)
        if self.page_s is not None:
            rest = min(rest, self.PAGE_SHARE * self.page_s)
        return max(self.MIN_S, rest)


class StreamPace:
    """The rests of one stream: see :class:`ReadPacing`."""

    def __init__(self, pacing: ReadPacing, started: float) -> None:
        self.pacing = pacing
        self.started = started
        self.reads = 0
        self.events = 0
        self.ended = False

    def after_read(self, chunk: bytes) -> float:
        """The rest after a read of ``chunk``: 0 once rested reads bring one event each."""
        self.reads += 1
        self.events += chunk.count(b"data:")   # one a server-sent event, any line ending
        if self.reads > self.pacing.TRIAL_READS and self.events < 1.2 * self.reads:
            return 0.0
        return self.pacing.rest_s()


class LineSink(Protocol):
    """Takes the lines of a stream, a block of whole lines at a time; ``take`` returns
    True to stop reading, ``done`` says the server ended the stream itself (so the
    connection can be kept)."""

    done: bool
    #: the answer came from the package's simulator (see :data:`SIMULATED_HEADER`)
    simulated: bool

    def take(self, block: str) -> bool: ...


async def read_stream(session: aiohttp.ClientSession, url: str, body: bytes,
                      sink: LineSink, pacing: ReadPacing) -> None:
    """POST ``body`` (JSON) to ``url`` and hand the lines of the answer to ``sink`` until it
    says stop or the stream ends. Stopping early closes the connection, which makes
    vLLM abort the request and free the GPU."""
    splitter = sse.EventSplitter()
    with mapped_errors(url), pacing.stream() as pace:
        async with session.post(f"{url}/chat/completions", data=body,
                                headers=_JSON) as response:
            if response.status >= 400:
                raise await status_error(response, url)
            sink.simulated = SIMULATED_HEADER in response.headers
            rest = _Rest(response)
            try:
                while chunk := await response.content.readany():
                    if sink.take(splitter.feed(chunk)):
                        if sink.done:   # only the end of the chunked body is left: keep alive
                            pace.ended = True
                            await response.content.read()
                        else:
                            response.close()
                        return
                    rest.start(pace.after_read(chunk))
                sink.take(splitter.close())
            finally:
                rest.end()


class _Rest:
    """Leaves a response's socket unread a while, so the next read takes many events.
    A timer ends the rest, not the reading task: the task wakes once a read, when the
    data is there. A rest never outlasts its stream (the connection may be reused)."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self.response = response
        self.paused: asyncio.ReadTransport | None = None
        self.timer: asyncio.TimerHandle | None = None

    def start(self, seconds: float) -> None:
        connection = self.response.connection   # None once the whole body has come
        transport = connection.transport if connection is not None else None
        if not seconds or not isinstance(transport, asyncio.ReadTransport) \
                or transport.is_closing():
            return
        transport.pause_reading()
        self.paused = transport
        self.timer = asyncio.get_running_loop().call_later(seconds, self.end)

    def end(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.paused is not None and not self.paused.is_closing():
            self.paused.resume_reading()
        self.paused = None


async def status_error(response: aiohttp.ClientResponse, url: str) -> ServerStatusError:
    """An HTTP error answer as :class:`ServerStatusError`, with the server's message."""
    raw = await response.content.read(_ERROR_BODY_BYTES)
    message = raw.decode("utf-8", "replace").strip()[:300] or response.reason or ""
    with contextlib.suppress(ValueError):
        message = body_message(json.loads(raw)) or message
    return ServerStatusError(f"HTTP {response.status}: {message}", status_code=response.status,
                             retry_after=parse_retry_after(response.headers.get("retry-after")),
                             url=url)


def body_message(body: object) -> str | None:
    """The message of an OpenAI-style error body (``{"error": {"message": ...}}`` or
    ``{"message": ...}``), or None."""
    if not isinstance(body, dict):
        return None
    inner = body.get("error", body)
    if isinstance(inner, dict) and isinstance(inner.get("message"), str):
        return str(inner["message"])
    return str(body["message"]) if isinstance(body.get("message"), str) else None


@contextlib.contextmanager
def mapped_errors(url: str) -> Iterator[None]:
    """aiohttp's and the stream's failures as the package's errors."""
    try:
        yield
    except OvisLoaderError:
        raise
    except (aiohttp.ServerTimeoutError, asyncio.TimeoutError) as exc:
        raise ServerTimeoutError(f"request timed out ({describe(exc)})", url=url) from exc
    except (aiohttp.ClientError, OSError) as exc:
        raise ServerConnectionError(f"connection failed: {describe(exc)}", url=url) from exc
    except (sse.MalformedEvent, ValueError, TypeError, AttributeError) as exc:
        raise ServerProtocolError(f"malformed response: {type(exc).__name__}: {exc}",
                                  url=url) from exc


def describe(exc: BaseException) -> str:
    """A failure in one line: its type, and its cause's type and message (or its own
    message when it has no cause)."""
    cause = exc.__cause__ or exc.__context__
    text = f"{type(exc).__name__}"
    if cause is not None:
        text += f": {type(cause).__name__}: {cause}"
    elif str(exc):
        text += f": {exc}"
    return text
