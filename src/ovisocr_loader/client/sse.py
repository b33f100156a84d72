"""Server-sent events from ``/v1/chat/completions`` (pure), parsed by hand.

openai-python builds a pydantic model for every streamed chunk; at ~600 chunks a
page that cost ~60 ms of client CPU per page (profiled), most of a core at the
field rate of 590 pages/min. A ``json.loads`` per ``data:`` line is a fraction of it.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import AsyncIterator
from typing import Any, Final

DONE: Final = "[DONE]"
_FIELDS = ("event", "id", "retry")
#: No vLLM event comes near this; a server streaming without newlines must not
#: grow one line without bound.
MAX_LINE_CHARS: Final = 1 << 20


class MalformedEvent(ValueError):
    """A line that is not server-sent events, or a data payload that is not JSON."""


async def iter_lines(chunks: AsyncIterator[bytes], max_chars: int = MAX_LINE_CHARS
                     ) -> AsyncIterator[str]:
    """Lines of a byte stream (UTF-8), each at most ``max_chars`` long."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending = ""
    async for chunk in chunks:
        pending += decoder.decode(chunk)
        *lines, pending = pending.split("\n")
        for line in lines:
            yield line.rstrip("\r")
        if len(pending) > max_chars:
            raise MalformedEvent(f"a line of more than {max_chars} characters without a newline")
    pending += decoder.decode(b"", final=True)
    if pending:
        yield pending.rstrip("\r")


def parse_line(line: str) -> dict[str, Any] | str | None:
    """One line of the stream: a JSON payload, :data:`DONE`, or None for lines to skip.

    Raises :class:`MalformedEvent` for anything a vLLM server would never send.
    """
    line = line.rstrip("\r\n")
    if not line or line.startswith(":"):
        return None
    field, sep, value = line.partition(":")
    if field != "data":
        if sep and field in _FIELDS:
            return None
        raise MalformedEvent(f"not a server-sent event line: {line[:60]!r}")
    value = value[1:] if value.startswith(" ") else value
    if value.strip() == DONE:
        return DONE
    try:
        payload = json.loads(value)
    except json.JSONDecodeError as exc:
        raise MalformedEvent(f"event data is not JSON: {value[:60]!r}") from exc
    if not isinstance(payload, dict):
        raise MalformedEvent(f"event data is not a JSON object: {value[:60]!r}")
    return payload


def error_message(payload: dict[str, Any]) -> str | None:
    """The message of an in-stream error event (vLLM reports failures this way)."""
    error = payload.get("error")
    if error is None:
        return None
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)
