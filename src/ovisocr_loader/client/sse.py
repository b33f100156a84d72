"""Server-sent events from ``/v1/chat/completions`` (pure), parsed by hand.

openai-python builds a pydantic model for every streamed chunk; at ~600 chunks a
page that cost ~60 ms of client CPU per page (profiled), most of a core at the
field rate of 590 pages/min. A ``json.loads`` per ``data:`` line is a fraction of it.
"""

from __future__ import annotations

import codecs
import json
import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any, Final

DONE: Final = "[DONE]"
_FIELDS = ("event", "id", "retry")
#: No vLLM event comes near this; a server streaming without newlines must not
#: grow one line without bound.
MAX_LINE_CHARS: Final = 1 << 20


class MalformedEvent(ValueError):
    """A line that is not server-sent events, or a data payload that is not JSON."""


class EventSplitter:
    """Cuts a byte stream (UTF-8) into blocks of whole lines, a network read at a time.

    vLLM sends one event per token by default: a page is ~600 events, so nothing here
    runs per line: a read's complete lines go on as one string (:class:`TokenShape`
    reads a block of plain token events at once). Lines that end in CRLF (servers
    built on sse-starlette; the SSE standard allows it) come out ending in ``\n``
    alone, so their token events take the same fast path.
    """

    def __init__(self, max_chars: int = MAX_LINE_CHARS) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""
        self._max_chars = max_chars

    def feed(self, chunk: bytes) -> str:
        """The complete lines of the stream so far, each ending in a newline."""
        text = self._pending + self._decoder.decode(chunk)
        end = text.rfind("\n") + 1
        self._pending = text[end:]
        if len(self._pending) > self._max_chars:
            raise MalformedEvent(f"a line of more than {self._max_chars} characters "
                                 "without a newline")
        lines = text[:end]
        return lines.replace("\r\n", "\n") if "\r" in lines else lines

    def close(self) -> str:
        """What is left when the stream ends (a last line without a newline)."""
        rest = self._pending + self._decoder.decode(b"", final=True)
        self._pending = ""
        return rest


_CONTENT = re.compile(r'"delta":\s?\{"content":\s?"')
_OPEN = re.compile(r'\s?\}.*"finish_reason":\s?null', re.DOTALL)
_USAGE = re.compile(r'"usage":\s?\{')


def quick_content(line: str) -> str | None:
    """The token text of a plain ``data:`` event, read without parsing its JSON.

    Most events of a stream are one shape, ``{..."choices":[{"index":0,"delta":
    {"content":"..."},...,"finish_reason":null}]}``: the string is decoded where it
    stands. Anything else (the role event, the finish, usage, errors, another
    server's field order) returns None and is parsed in full by :func:`parse_line`.
    """
    span = _content_span(line)
    return None if span is None else str(scanstring(line, span[0])[0])


def _content_span(line: str) -> tuple[int, int] | None:
    """Where the token text of a plain event stands in ``line`` (after its opening
    quote, at its closing quote), or None for any other line."""
    found = _CONTENT.search(line)
    if found is None or not line.startswith("data:"):
        return None
    try:
        end = scanstring(line, found.end())[1]
    except ValueError:
        return None
    if _OPEN.match(line, end) is None or _USAGE.search(line, end) is not None or \
            '"error"' in line[:found.start()]:
        return None
    return found.end(), end - 1


class TokenShape:
    """What the plain token events of one stream look like around their text.

    A server sends the token events of one request alike but for the text (vLLM: the
    same id, created, model and field order). Once one has been read as such
    (:meth:`learn`), a whole read of them is recognised with ``startswith`` and
    ``endswith`` per line and decoded in one call (:meth:`text`): about 1 us a token
    rather than 2.5 line by line.
    """

    def __init__(self) -> None:
        self._head: str | None = None
        self._tail = ""

    def learn(self, line: str) -> None:
        """Take the shape of ``line`` if it is a plain token event (once)."""
        if self._head is not None:
            return
        span = _content_span(line)
        if span is not None:
            self._head, self._tail = line[:span[0]], line[span[1]:]

    def text(self, block: str) -> str | None:
        """The token texts of ``block`` (:meth:`EventSplitter.feed`) joined, when each
        of its lines is blank or a token event of the learned shape; else None."""
        head, tail = self._head, self._tail
        if head is None:
            return None
        lines = [line for line in block.split("\n") if line]
        start, cut = len(head), len(tail)
        if min(map(len, lines), default=start + cut) < start + cut or not all(
                line.startswith(head) and line.endswith(tail) for line in lines):
            return None   # another event, or a head and tail that overlap
        bodies = "".join([line[start:-cut] for line in lines])
        if any(line[-cut - 1] == "\\" for line in lines if len(line) > start + cut):
            return None   # a text ending in a backslash: read line by line, to be sure
        try:
            text, end = scanstring(f'"{bodies}"', 1)
        except ValueError:
            return None
        return str(text) if end == len(bodies) + 2 else None


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
