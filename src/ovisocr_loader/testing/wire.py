"""What the simulator writes on the wire: HTTP/1.1 responses and vLLM's event stream.

Kept apart from :mod:`.server`, which decides what to answer; this module only knows
how vLLM frames it (chunked transfer, one ``data:`` event per ``stream_interval``
tokens, compact JSON, a usage event and ``[DONE]`` at the end).
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
            408: "Request Timeout", 429: "Too Many Requests", 500: "Internal Server Error",
            502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout"}

#: vLLM writes its events as compact JSON (pydantic's model_dump_json)
_COMPACT = (",", ":")

#: says "simulated" on every streamed answer (the client's ``SIMULATED_HEADER``): a
#: client keeps such pages out of the cache it was not pointed at (the user's default),
#: where a real server's run of the same scans would read them back
_STREAM_HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                b"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n"
                b"X-Ovisocr-Simulated: 1\r\n\r\n")

#: the prompt's size in the usage event (the simulator does not tokenize images)
PROMPT_TOKENS = 1000


class Disconnected(Exception):
    """The client went away; generation stops as vLLM's abort would."""


async def send(writer: asyncio.StreamWriter, status: int, body: bytes, content_type: str,
               extra: dict[str, str] | None = None) -> None:
    """Write one whole response with a ``Content-Length``."""
    head = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}",
            f"Content-Type: {content_type}", f"Content-Length: {len(body)}"]
    head += [f"{k}: {v}" for k, v in (extra or {}).items()]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
    await writer.drain()


async def send_json(writer: asyncio.StreamWriter, status: int, payload: dict[str, Any],
                    extra: dict[str, str] | None = None) -> None:
    await send(writer, status, json.dumps(payload).encode(), "application/json", extra)


def completion(model: str, content: str, finish: str, completion_tokens: int,
               text_fields: tuple[str, ...] = ("content",)) -> dict[str, Any]:
    """A whole (not streamed) chat completion, as vLLM answers ``stream: false``."""
    message: dict[str, str | None] = {"role": "assistant", "content": None}
    message.update(dict.fromkeys(text_fields, content))
    return {"id": _completion_id(), "object": "chat.completion", "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage(completion_tokens)}


def _completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


def usage(completion_tokens: int) -> dict[str, int]:
    return {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": completion_tokens,
            "total_tokens": PROMPT_TOKENS + completion_tokens}


class CompletionStream:
    """One streamed chat completion, framed as vLLM frames it: a role event, the tokens
    ``interval`` to an event, a finish event, a usage event, ``[DONE]``.

    Tokens wait until an event is full (vLLM's ``--stream-interval``) unless the
    stream ends; the events of one :meth:`send_tokens` call go out in one write. Lines
    end in ``line_ending`` (vLLM: ``\n``; servers built on sse-starlette: ``\r\n``).
    The token text goes in each of the delta's ``text_fields`` (see
    :attr:`Simulator.text_fields`).
    """

    def __init__(self, writer: asyncio.StreamWriter, model: str, interval: int,
                 line_ending: str = "\n", text_fields: tuple[str, ...] = ("content",)) -> None:
        self._writer = writer
        self._text_fields = text_fields
        self._model = model
        self._interval = interval
        self._end_of_event = line_ending * 2
        self._id = _completion_id()
        self._created = int(time.time())
        self._pending: list[str] = []

    async def open(self) -> None:
        """Send the response head; the body follows in chunks."""
        self._writer.write(_STREAM_HEAD)
        await self._writer.drain()

    async def send_role(self) -> None:
        await self._send_events([self._choice({"role": "assistant", "content": ""})])

    async def send_tokens(self, tokens: list[str], *, flush: bool = False) -> None:
        """Queue ``tokens`` and send every full event (all of them when ``flush``)."""
        self._pending += tokens
        step = self._interval
        ready = len(self._pending) if flush else len(self._pending) - len(self._pending) % step
        if ready:
            await self._send_events([
                self._choice(dict.fromkeys(self._text_fields, "".join(self._pending[i:i + step])))
                for i in range(0, ready, step)])
            del self._pending[:ready]

    async def send_raw(self, data: str) -> None:
        """Send an event whose data is ``data`` as it is (a fault: not JSON)."""
        await self._send_events([data])

    async def finish(self, reason: str, completion_tokens: int) -> None:
        """Send the finish, usage and ``[DONE]`` events and end the body."""
        await self._send_events([
            self._choice({}, reason),
            {**self._envelope(), "choices": [], "usage": usage(completion_tokens)},
            "[DONE]"])
        await self.end()

    async def end(self) -> None:
        """End the chunked body (whatever was or was not sent before)."""
        await _write_chunk(self._writer, b"")

    def _envelope(self) -> dict[str, Any]:
        return {"id": self._id, "object": "chat.completion.chunk", "created": self._created,
                "model": self._model}

    def _choice(self, delta: dict[str, str], finish: str | None = None) -> dict[str, Any]:
        return {**self._envelope(),
                "choices": [{"index": 0, "delta": delta, "logprobs": None,
                             "finish_reason": finish,
                             **({"stop_reason": None} if finish is not None else {})}]}

    async def _send_events(self, events: list[dict[str, Any] | str]) -> None:
        await _write_chunk(self._writer, b"".join(
            f"data: {e if isinstance(e, str) else json.dumps(e, separators=_COMPACT)}"
            f"{self._end_of_event}".encode() for e in events))


async def _write_chunk(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    try:
        await writer.drain()
    except ConnectionError as exc:
        raise Disconnected from exc
