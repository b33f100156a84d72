"""The one place that speaks HTTP/SSE to the OpenAI-compatible endpoint.

Page requests stream over aiohttp directly (:mod:`.chat_stream`: one read per batch
of events, not five iterator layers per token); the probe of ``/v1/models`` goes
through ``openai.AsyncOpenAI`` with its retries off (ours live in :mod:`.retry`).
It enforces the first-token and page deadlines, closes the stream the moment the
guard sees garbage (vLLM aborts a request whose client disconnects, which frees the
GPU), and maps library errors to ours.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import httpx2
import openai

from ..config import Timeouts
from ..errors import (
    FirstTokenTimeout,
    OvisLoaderError,
    PageTimeout,
    ServerConnectionError,
    ServerProtocolError,
    ServerStatusError,
    ServerTimeoutError,
    ServerUnreachableError,
)
from . import chat_stream, sse
from .guard import Degenerate
from .metrics import ServerLoad, metrics_url, parse_metrics
from .request import ChatRequest
from .retry import parse_retry_after
from .secrets import Secrets

log = logging.getLogger("ovisocr_loader")

_METRICS_TIMEOUT_S = 2.0
_METRICS_RETRY = 15
_METRICS_MAX_BYTES = 1 << 20   # vLLM's page is tens of KB; never read a flood

#: An answer longer than this many characters per requested token is not a real one.
MAX_CHARS_PER_TOKEN = 32

START_HINT = (
    "Start an OvisOCR2 server, e.g.: vllm serve ATH-MaaS/OvisOCR2 --gpu-memory-utilization 0.9 "
    "--max-model-len 32768 --gdn-prefill-backend triton --mm-processor-cache-gb 0 "
    "--limit-mm-per-prompt '{\"image\":1}', or point base_url / OVISOCR_BASE_URL at one. "
    "To try the loader without a GPU: ovisocr simulate --port 8000 (a simulated server)."
)


@dataclass
class StreamResult:
    """What one streamed request produced, also when the guard cut it short."""

    text: str
    finish_reason: str | None
    completion_tokens: int | None
    prompt_tokens: int | None
    first_token_s: float | None
    latency_s: float
    degenerate: Degenerate | None


class Transport:
    """The HTTP clients of one endpoint, bound to one event loop (docs/benchmarks.md
    has what each costs per page)."""

    def __init__(self, base_url: str, api_key: str | None, timeouts: Timeouts) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeouts = timeouts
        self._client = openai.AsyncOpenAI(
            base_url=self.base_url,
            api_key=api_key or "EMPTY",
            max_retries=0,
            timeout=openai.Timeout(max(timeouts.page, timeouts.first_token),
                                   connect=timeouts.connect),
            http_client=openai.DefaultAioHttpClient(
                timeout=openai.Timeout(max(timeouts.page, timeouts.first_token),
                                       connect=timeouts.connect),
                limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=1000)),
        )
        self._metrics_session: aiohttp.ClientSession | None = None
        self._metrics_misses = 0
        self._api_key = api_key
        self._secrets = Secrets(api_key)
        self._chat_session: aiohttp.ClientSession | None = None
        self._pacing = chat_stream.ReadPacing()
        #: answer characters received on every stream so far (the adaptive rate)
        self.streamed_chars = 0
        #: whether this endpoint was seen sending the answer as reasoning (warned once)
        self.sends_reasoning = False
        #: whether this endpoint is the package's simulator (its answers are made up)
        self.simulated = False

    async def aclose(self) -> None:
        await self._client.close()
        if self._chat_session is not None:
            await self._chat_session.close()
        if self._metrics_session is not None:
            await self._metrics_session.close()

    async def load(self) -> ServerLoad | None:
        """The server's own load from ``/metrics``, or None (absent, unreadable, slow).

        A server without ``/metrics`` is asked again only every ``_METRICS_RETRY`` calls.
        """
        if self._metrics_misses % _METRICS_RETRY:
            self._metrics_misses += 1
            return None
        if self._metrics_session is None:
            self._metrics_session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=_METRICS_TIMEOUT_S))
        try:
            async with self._metrics_session.get(metrics_url(self.base_url)) as response:
                body = await response.content.read(_METRICS_MAX_BYTES) \
                    if response.status == 200 else b""
                text = body.decode("utf-8", "replace")
        except (aiohttp.ClientError, asyncio.TimeoutError):
            text = ""
        load = parse_metrics(text) if text else None
        self._metrics_misses = 0 if load is not None else self._metrics_misses + 1
        return load

    async def probe(self) -> list[str]:
        """List the served model ids; fail fast with a clear error if nothing answers."""
        try:
            with _mapped_errors(self.base_url, probe=True, timeout=self.timeouts.probe):
                raw = await asyncio.wait_for(self._client.models.with_raw_response.list(),
                                             self.timeouts.probe)
                body = raw.content
            return _model_ids(body, self.base_url)
        except OvisLoaderError as exc:
            raise self._secrets.scrub(exc) from None

    async def stream(self, request: ChatRequest,
                     on_text: Callable[[str], Degenerate | None],
                     on_first_token: Callable[[], None] | None = None) -> StreamResult:
        """Run one streamed completion; ``on_text`` sees each delta and may stop it,
        ``on_first_token`` is told when the first one arrives (the server is alive).

        The response is read as raw lines (see :mod:`.sse`) by one task that two
        timers may cancel: no token by ``first_token`` seconds, or no end by
        ``page`` seconds (a timer per request, not a ``wait_for`` per line, which
        cost a task per line). Leaving early closes the connection, which makes
        vLLM abort the request and free the GPU.
        """
        loop = asyncio.get_running_loop()
        state = _StreamState(start=loop.time())
        reader = asyncio.ensure_future(self._read(request, on_text, state, on_first_token))

        def expire(kind: str) -> None:
            if not reader.done() and (kind == "page" or state.first_token_at is None):
                state.expired = kind
                reader.cancel()

        timers = [loop.call_at(state.start + self.timeouts.first_token, expire, "first"),
                  loop.call_at(state.start + self.timeouts.page, expire, "page")]
        try:
            await reader
        except OvisLoaderError as exc:
            raise self._secrets.scrub(exc) from None
        except asyncio.CancelledError:
            if _cancelled_by_caller():
                raise
            if state.expired == "first":
                raise FirstTokenTimeout(
                    f"no token within first_token_timeout={self.timeouts.first_token:g}s",
                    url=self.base_url) from None
            if state.expired == "page":
                raise PageTimeout(f"page not finished within page_timeout="
                                  f"{self.timeouts.page:g}s", url=self.base_url) from None
            raise
        finally:
            for timer in timers:
                timer.cancel()
        result = state.result(loop.time())
        result.text = self._secrets.redact(result.text, bearer=False)   # a page can echo it too
        return result

    async def _read(self, request: ChatRequest, on_text: Callable[[str], Degenerate | None],
                    state: _StreamState, on_first_token: Callable[[], None] | None) -> None:
        """Send the request and consume its event stream into ``state``."""
        events = _Events(state, on_text, on_first_token, self,
                         int(request.kwargs.get("max_tokens") or 4096) * MAX_CHARS_PER_TOKEN)
        if self._chat_session is None:
            self._chat_session = chat_stream.new_session(self.timeouts, self._api_key)
        await chat_stream.read_stream(self._chat_session, self.base_url, request.encoded(),
                                      events, self._pacing)
        self.simulated |= events.simulated


class _Events:
    """The events of one stream into its state; :meth:`take` says when to stop reading.

    An answer longer than its ``max_tokens`` could produce is cut off: a server that
    streams without end must not grow the client's memory without bound.
    """

    def __init__(self, state: _StreamState, on_text: Callable[[str], Degenerate | None],
                 on_first_token: Callable[[], None] | None, transport: Transport,
                 limit: int) -> None:
        self.done = False
        self.simulated = False
        self.state = state
        self.on_text = on_text
        self.on_first_token = on_first_token
        self.transport = transport
        self.url = transport.base_url
        self.limit = limit
        self.received = 0
        self.shape = sse.TokenShape()

    def take(self, block: str) -> bool:
        """The lines of one read; the token texts of a run of plain events reach the
        guard joined, one call per read rather than per token."""
        text = self.shape.text(block)
        if text is not None:   # the common read: nothing but token events
            return self._delta(text)
        texts: list[str] = []
        for line in block.split("\n"):
            if not line:
                continue
            text = sse.quick_content(line)
            if text is not None:
                texts.append(text)
                self.shape.learn(line)
                continue
            if texts and self._delta("".join(texts)):
                return True
            texts = []
            if self._event(line):
                return True
        return bool(texts) and self._delta("".join(texts))

    def _event(self, line: str) -> bool:
        """Any event but a plain token: parsed in full."""
        event = sse.parse_line(line)
        if event is None:
            return False
        if isinstance(event, str):   # [DONE]
            self.done = True
            return True
        message = sse.error_message(event)
        if message is not None:
            raise ServerProtocolError(f"server reported an error in the stream: {message}",
                                      url=self.url)
        if isinstance(event.get("usage"), dict):
            self.state.usage = event["usage"]
        choices = event.get("choices") or []
        if not choices:
            return False
        choice = choices[0]
        if self._delta(self._answer_text(choice.get("delta") or {})):
            return True
        if choice.get("finish_reason") is not None:
            self.state.finish_reason = str(choice["finish_reason"])
        return False

    def _answer_text(self, delta: dict[str, Any]) -> str:
        """The answer's text in one delta: its ``content``, after any text a reasoning
        parser put in ``reasoning`` (or ``reasoning_content``, the older name, which
        some releases send beside it). Thinking is disabled, so that text is the
        page's: a vLLM started with ``--reasoning-parser qwen3`` has been seen to send
        a whole thinking-disabled answer so (vllm-project/vllm#40816)."""
        reasoning = _text(delta, "reasoning") or _text(delta, "reasoning_content")
        if reasoning and not self.transport.sends_reasoning:
            self.transport.sends_reasoning = True
            log.warning("%s sends the page text as reasoning (vLLM's --reasoning-parser "
                        "does so with thinking disabled); read as the page's text. Serve "
                        "OvisOCR2 without --reasoning-parser.", self.url)
        return reasoning + _text(delta, "content")

    def _delta(self, text: str) -> bool:
        if not text:
            return False
        state = self.state
        if state.first_token_at is None:
            state.first_token_at = asyncio.get_running_loop().time()
            if self.on_first_token is not None:
                self.on_first_token()
        self.received += len(text)
        self.transport.streamed_chars += len(text)
        if self.received > self.limit:
            raise ServerProtocolError(
                f"answer longer than max_tokens allows ({self.received} characters for "
                f"{self.limit // MAX_CHARS_PER_TOKEN} tokens); cut off", url=self.url)
        state.parts.append(text)
        state.verdict = self.on_text(text)
        return state.verdict is not None


def _text(delta: dict[str, Any], key: str) -> str:
    value = delta.get(key)
    return value if isinstance(value, str) else ""


def _cancelled_by_caller() -> bool:
    """Whether the task running the stream is itself being cancelled: then a timer that
    fired at the same moment must not turn the caller's cancellation into a timeout
    (the caller would go on, retrying). Python 3.10 cannot tell; there the timer wins."""
    cancelling = getattr(asyncio.current_task(), "cancelling", None)
    return cancelling is not None and bool(cancelling())


@dataclass
class _StreamState:
    """What one request has produced so far (shared by the reader and its timers)."""

    start: float
    parts: list[str] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    first_token_at: float | None = None
    verdict: Degenerate | None = None
    expired: str | None = None

    def result(self, now: float) -> StreamResult:
        return StreamResult(
            text="".join(self.parts),
            finish_reason="aborted" if self.verdict is not None else self.finish_reason,
            completion_tokens=_int_or_none(self.usage.get("completion_tokens")),
            prompt_tokens=_int_or_none(self.usage.get("prompt_tokens")),
            first_token_s=None if self.first_token_at is None
            else self.first_token_at - self.start,
            latency_s=now - self.start,
            degenerate=self.verdict,
        )


@contextlib.contextmanager
def _mapped_errors(url: str, *, probe: bool = False, timeout: float | None = None
                   ) -> Iterator[None]:
    """The one boundary where library errors become ours (probe and stream alike)."""
    try:
        yield
    except OvisLoaderError:
        raise
    except openai.APIStatusError as exc:
        raise _status_error(exc, url, probe) from exc
    except (openai.APITimeoutError, httpx2.TransportError, openai.APIConnectionError,
            asyncio.TimeoutError, OSError) as exc:
        timed_out = isinstance(exc, asyncio.TimeoutError) or _timed_out(exc)
        if probe:
            why = (f"no answer within {timeout:g}s" if timed_out and timeout
                   else _connection_problem(exc))
            raise ServerUnreachableError(f"cannot reach the OvisOCR2 endpoint at {url} "
                                         f"({why}). {START_HINT}", url=url) from exc
        what = chat_stream.describe(exc)
        if timed_out:
            raise ServerTimeoutError(f"request timed out ({what})", url=url) from exc
        raise ServerConnectionError(f"connection failed: {what}", url=url) from exc
    except openai.APIError as exc:
        raise ServerProtocolError(f"server reported an error: {exc.message}", url=url) from exc
    except (sse.MalformedEvent, httpx2.DecodingError, AttributeError, TypeError,
            ValueError) as exc:
        raise ServerProtocolError(f"malformed response: {type(exc).__name__}: {exc}",
                                  url=url) from exc


def _model_ids(body: bytes, url: str) -> list[str]:
    """The ids of an OpenAI model list; a clear error for anything else (a login page)."""
    try:
        payload = json.loads(body)
        ids = [str(model["id"]) for model in payload["data"]]
    except (ValueError, KeyError, TypeError) as exc:
        sample = body[:80].decode("utf-8", "replace").strip()
        raise ServerProtocolError(
            f"GET {url}/models did not answer with an OpenAI model list (it began {sample!r}); "
            "is this the URL of a vLLM server, ending in /v1?", url=url) from exc
    return ids


def _connection_problem(exc: BaseException) -> str:
    """Refused, host unknown, or something else, from the root of the cause chain."""
    chain: list[BaseException] = [exc]
    while (chain[-1].__cause__ or chain[-1].__context__) is not None and len(chain) < 10:
        chain.append(chain[-1].__cause__ or chain[-1].__context__)  # type: ignore[arg-type]
    if any(isinstance(e, ConnectionRefusedError) or "refused" in str(e).lower()
           for e in chain):
        return "connection refused: is the server running, and on this port?"
    if any("name or service not known" in str(e).lower() or "nodename" in str(e).lower()
           or "getaddrinfo" in str(e).lower() for e in chain):
        return "host name not found"
    return chat_stream.describe(exc)


def _timed_out(exc: BaseException) -> bool:
    """A real timeout? The aiohttp adapter reports a dropped connection as a
    ConnectTimeout too, so the root of the cause chain decides."""
    chain: list[BaseException] = [exc]
    while chain[-1].__cause__ is not None and len(chain) < 10:
        chain.append(chain[-1].__cause__)
    if any(isinstance(e, (TimeoutError, asyncio.TimeoutError)) for e in chain):
        return True
    return isinstance(chain[-1], (openai.APITimeoutError, httpx2.TimeoutException))


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) else None


def _status_error(exc: openai.APIStatusError, url: str, probe: bool = False
                  ) -> ServerStatusError:
    retry_after = parse_retry_after(exc.response.headers.get("retry-after"))
    message = f"HTTP {exc.status_code}: {_server_message(exc)}"
    if probe and exc.status_code == 404 and not url.rstrip("/").endswith("/v1"):
        message += f" (GET {url}/models); vLLM serves the API under /v1: try {url}/v1"
    elif probe and exc.status_code in (401, 403):
        message += " (pass api_key= or set OVISOCR_API_KEY)"
    return ServerStatusError(message, status_code=exc.status_code, retry_after=retry_after,
                             url=url)


def _server_message(exc: openai.APIStatusError) -> str:
    return chat_stream.body_message(exc.body) or str(exc.message)
