"""The one place that speaks HTTP/SSE to the OpenAI-compatible endpoint.

It wraps ``openai.AsyncOpenAI`` with its own retries off (ours live in
:mod:`.retry`), enforces the first-token and page deadlines, closes the stream
the moment the guard sees garbage (vLLM aborts a request whose client
disconnects, which frees the GPU), and maps library errors to ours at one
boundary.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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
from .guard import Degenerate
from .request import ChatRequest
from .retry import parse_retry_after

log = logging.getLogger("ovisocr_loader")

START_HINT = (
    "Start an OvisOCR2 server, e.g.: vllm serve ATH-MaaS/OvisOCR2 --gpu-memory-utilization 0.9 "
    "--max-model-len 32768 --gdn-prefill-backend triton --mm-processor-cache-gb 0 "
    "--limit-mm-per-prompt '{\"image\":1}', or point base_url / OVISOCR_BASE_URL at one."
)
_CLOSE_TIMEOUT = 5.0


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
    """An ``AsyncOpenAI`` client bound to one event loop and one endpoint."""

    def __init__(self, base_url: str, api_key: str | None, timeouts: Timeouts) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeouts = timeouts
        self._client = openai.AsyncOpenAI(
            base_url=self.base_url,
            api_key=api_key or "EMPTY",
            max_retries=0,
            timeout=openai.Timeout(max(timeouts.page, timeouts.first_token),
                                   connect=timeouts.connect),
        )

    async def aclose(self) -> None:
        await self._client.close()

    async def probe(self) -> list[str]:
        """List the served model ids; fail fast with a clear error if nothing answers."""
        try:
            page = await asyncio.wait_for(self._client.models.list(), self.timeouts.probe)
        except (openai.APIConnectionError, asyncio.TimeoutError) as exc:
            raise ServerUnreachableError(
                f"cannot reach the OvisOCR2 endpoint at {self.base_url} "
                f"({_describe(exc)}). {START_HINT}", url=self.base_url) from exc
        except openai.APIStatusError as exc:
            raise _status_error(exc, self.base_url) from exc
        return [model.id for model in page.data]

    async def stream(self, request: ChatRequest,
                     on_text: Callable[[str], Degenerate | None]) -> StreamResult:
        """Run one streamed completion; ``on_text`` sees each delta and may stop it."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        first_deadline = start + self.timeouts.first_token
        page_deadline = start + self.timeouts.page
        parts: list[str] = []
        finish_reason: str | None = None
        usage: Any = None
        first_token_at: float | None = None
        verdict: Degenerate | None = None
        stream: Any = None
        try:
            stream = await self._bounded(
                self._client.chat.completions.create(**request.kwargs),
                first_deadline, loop, first=True)
            iterator = stream.__aiter__()
            while True:
                deadline = page_deadline if first_token_at is not None else first_deadline
                try:
                    chunk = await self._bounded(iterator.__anext__(), deadline, loop,
                                                first=first_token_at is None)
                except StopAsyncIteration:
                    break
                if getattr(chunk, "usage", None) is not None:
                    usage = chunk.usage
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                delta = choice.delta.content if choice.delta is not None else None
                if delta:
                    if first_token_at is None:
                        first_token_at = loop.time()
                    parts.append(delta)
                    verdict = on_text(delta)
                    if verdict is not None:
                        break
                if choice.finish_reason is not None:
                    finish_reason = choice.finish_reason
        except OvisLoaderError:
            raise
        except openai.APIStatusError as exc:
            raise _status_error(exc, self.base_url) from exc
        except openai.APITimeoutError as exc:
            raise ServerTimeoutError(f"request timed out ({_describe(exc)})",
                                     url=self.base_url) from exc
        except openai.APIConnectionError as exc:
            raise ServerConnectionError(f"connection failed: {_describe(exc)}",
                                        url=self.base_url) from exc
        except openai.APIError as exc:
            raise ServerProtocolError(f"server reported an error in the stream: {exc.message}",
                                      url=self.base_url) from exc
        except (json.JSONDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ServerProtocolError(f"malformed response: {type(exc).__name__}: {exc}",
                                      url=self.base_url) from exc
        finally:
            if stream is not None:
                await _close_quietly(stream)
        end = loop.time()
        return StreamResult(
            text="".join(parts),
            finish_reason="aborted" if verdict is not None else finish_reason,
            completion_tokens=getattr(usage, "completion_tokens", None),
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            first_token_s=None if first_token_at is None else first_token_at - start,
            latency_s=end - start,
            degenerate=verdict,
        )

    async def _bounded(self, awaitable: Any, deadline: float, loop: asyncio.AbstractEventLoop,
                       *, first: bool) -> Any:
        remaining = deadline - loop.time()
        try:
            if remaining <= 0:
                raise asyncio.TimeoutError
            return await asyncio.wait_for(awaitable, remaining)
        except asyncio.TimeoutError as exc:
            if hasattr(awaitable, "close"):
                awaitable.close()
            if first:
                raise FirstTokenTimeout(
                    f"no token within first_token_timeout={self.timeouts.first_token:g}s",
                    url=self.base_url) from exc
            raise PageTimeout(f"page not finished within page_timeout={self.timeouts.page:g}s",
                              url=self.base_url) from exc


async def _close_quietly(stream: Any) -> None:
    try:
        await asyncio.wait_for(stream.close(), _CLOSE_TIMEOUT)
    except (asyncio.TimeoutError, OSError, openai.APIError) as exc:
        log.debug("closing stream failed: %s", exc)


def _status_error(exc: openai.APIStatusError, url: str) -> ServerStatusError:
    retry_after = parse_retry_after(exc.response.headers.get("retry-after"))
    return ServerStatusError(f"HTTP {exc.status_code}: {_server_message(exc)}",
                             status_code=exc.status_code, retry_after=retry_after, url=url)


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(body.get("message"), str):
            return str(body["message"])
    return str(exc.message)


def _describe(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    text = f"{type(exc).__name__}"
    if cause is not None:
        text += f": {type(cause).__name__}: {cause}"
    elif str(exc):
        text += f": {exc}"
    return text
