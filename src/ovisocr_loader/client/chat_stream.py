"""The streamed chat-completions request over aiohttp itself, read in gathered reads.

vLLM sends one server-sent event per token by default: ~600 network reads a page.
Through openai-python's client each read climbs five iterator layers (openai, HTTPX2,
the aiohttp adapter); here it is one ``readany``. And after each read the socket is
left unread for a while (``pause_reading``, see :class:`ReadPacing`): the events that
arrive meanwhile wait in the kernel and come in with the next read, many tokens for
the price of one wake-up. Measured: docs/benchmarks.md.

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
    """How long a stream's socket rests after each read, from how many streams are open.

    Each read wakes the event loop (selector, transport, aiohttp, the reading task):
    ~75 us with 64 streams open on a 2-core machine, more than parsing its events
    costs. Resting the socket lets the tokens of the meantime arrive in one read. The
    rest grows with the streams open, ``PER_STREAM_S`` each, so that together they
    wake the loop about every ``PER_STREAM_S``: one stream reads every 6 ms, 64 every
    0.38 s (about 30 tokens a read at the RTX 5090's field speed), none waits more than
    ``MAX_S``. The guard sees tokens that much later, which the early abort hardly
    notices (a loop runs for thousands of tokens); a page is seen to end half a rest
    later on average (0.19 s of a page's ~8 s in flight at 64), which costs no
    throughput while the server has other requests to run (docs/benchmarks.md).
    """

    PER_STREAM_S = 0.006
    MIN_S = 0.005
    MAX_S = 0.5

    def __init__(self) -> None:
        self.open = 0

    @contextlib.contextmanager
    def stream(self) -> Iterator[None]:
        """Count one stream as open while it is read."""
        self.open += 1
        try:
            yield
        finally:
            self.open -= 1

    def rest_s(self) -> float:
        return min(self.MAX_S, max(self.MIN_S, self.open * self.PER_STREAM_S))


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
    with mapped_errors(url), pacing.stream():
        async with session.post(f"{url}/chat/completions", data=body,
                                headers=_JSON) as response:
            if response.status >= 400:
                raise await status_error(response, url)
            sink.simulated = SIMULATED_HEADER in response.headers
            transport = response.connection.transport if response.connection else None
            while chunk := await response.content.readany():
                if sink.take(splitter.feed(chunk)):
                    if sink.done:   # only the end of the chunked body is left: keep alive
                        await response.content.read()
                    else:
                        response.close()
                    return
                await _rest(transport, pacing.rest_s())
            sink.take(splitter.close())


async def _rest(transport: asyncio.BaseTransport | None, seconds: float) -> None:
    """Leave the socket unread a while, so the next read takes many events."""
    reader = transport if isinstance(transport, asyncio.ReadTransport) \
        and not transport.is_closing() else None
    if reader is not None:
        reader.pause_reading()
    try:
        await asyncio.sleep(seconds)
    finally:
        if reader is not None and not reader.is_closing():
            reader.resume_reading()


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
