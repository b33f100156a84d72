"""An OpenAI-compatible simulator of a vLLM server running OvisOCR2.

Real HTTP/1.1 on 127.0.0.1 (keep-alive, chunked SSE), serving what vLLM serves:
``POST /v1/chat/completions`` (JSON and SSE streaming with a usage chunk),
``GET /v1/models``, ``GET /health`` and ``GET /metrics``. It recognises
generated pages by their bar code (:mod:`.pages`), answers with the registered
:class:`PageScript` or with deterministic synthetic Markdown, paces tokens with a
:class:`LatencyModel`, stops generating when the client disconnects (as vLLM
aborts such a request), and records every request for assertions.

Use it as a context manager, a pytest fixture (``ovis_simulator``) or from the
command line (``ovisocr simulate --port 8000``).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import io
import itertools
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from PIL import Image, UnidentifiedImageError

from .latency import GPU_PROFILES, GpuProfile, LatencyModel
from .pages import read_turned_page_id
from .scripts import (
    PANGRAM,
    EndWithoutFinish,
    Fault,
    GiveUp,
    Hang,
    HttpError,
    MalformedJSON,
    MalformedSSE,
    PageScript,
    Reset,
    synthetic_markdown,
)
from .wire import CompletionStream, Disconnected, completion, send, send_json

log = logging.getLogger("ovisocr_loader.testing")

DEFAULT_MODEL = "ATH-MaaS/OvisOCR2"
#: where a chat-completion delta can carry the answer's text (see Simulator.text_fields)
TEXT_FIELDS = ("content", "reasoning", "reasoning_content")
_MIN_TICK = 0.005


@dataclass
class RequestRecord:
    """One request as the simulator saw it."""

    id: int
    path: str
    body: dict[str, Any]
    page_key: str = ""
    page_id: int | None = None
    attempt: int = 0
    content_types: list[str] = field(default_factory=list)
    prompt: str | None = None
    image_width: int = 0
    image_height: int = 0
    image_mode: str = ""
    image_format: str = ""
    image_bytes: int = 0
    stream: bool = False
    start: float = 0.0
    end: float | None = None
    in_flight_at_start: int = 0
    tokens_generated: int = 0
    finish_reason: str | None = None
    disconnected: bool = False
    status: int = 200
    fault: str | None = None
    #: how far clockwise the page arrived turned from upright (a generated page only)
    image_turn: int = 0

    @property
    def params(self) -> dict[str, Any]:
        """The request body without the messages (sampling and vLLM extras)."""
        return {k: v for k, v in self.body.items() if k != "messages"}

    @property
    def greedy_unpenalized(self) -> bool:
        body = self.body
        return (float(body.get("temperature", 1.0)) == 0.0
                and not float(body.get("frequency_penalty") or 0.0)
                and not float(body.get("presence_penalty") or 0.0)
                and float(body.get("repetition_penalty") or 1.0) == 1.0)


class Simulator:
    """A simulated OvisOCR2 server in a background thread.

    Example::

        with Simulator(latency=LatencyModel(speed=50)) as sim:
            sim.register(page_id, "# Title\\n\\nBody")
            OvisParser(base_url=sim.base_url).parse(pdf_bytes)
            assert sim.requests[0].body["temperature"] == 0
    """

    def __init__(self, *, model: str = DEFAULT_MODEL, latency: LatencyModel | None = None,
                 port: int = 0, host: str = "127.0.0.1", max_num_seqs: int = 256,
                 synthetic_tokens: int = 600, api_key: str | None = None,
                 kv_slots: int | None = None, metrics: bool = True,
                 stream_interval: int = 1, sse_line_ending: str = "\n",
                 text_fields: tuple[str, ...] = ("content",)) -> None:
        if stream_interval < 1:
            raise ValueError("stream_interval must be at least 1")
        if sse_line_ending not in ("\n", "\r\n"):
            raise ValueError("sse_line_ending must be '\\n' or '\\r\\n'")
        if not text_fields or not set(text_fields) <= set(TEXT_FIELDS):
            raise ValueError(f"text_fields must be some of {TEXT_FIELDS}")
        self.model = model
        #: tokens per SSE event, as vLLM's ``--stream-interval`` (default 1, like vLLM)
        self.stream_interval = stream_interval
        #: how event lines end: vLLM's ``\n``, or ``\r\n`` as servers built on
        #: sse-starlette write them
        self.sse_line_ending = sse_line_ending
        #: the delta fields the answer's text goes in: vLLM's ``content``; a vLLM started
        #: with ``--reasoning-parser qwen3`` can misroute a thinking-disabled answer into
        #: ``reasoning`` (vllm-project/vllm#40816); some releases send it twice, as
        #: ``reasoning`` and ``reasoning_content``
        self.text_fields = text_fields
        self.latency = latency or LatencyModel(speed=50.0)
        #: requests that fill the KV cache (None: never full); beyond it, preemptions
        self.kv_slots = kv_slots
        #: serve /metrics (vLLM does); False plays a server or gateway without it
        self.serve_metrics = metrics
        self.preemptions = 0
        self.host = host
        self.port = port
        self.api_key = api_key
        self.synthetic_tokens = synthetic_tokens
        self.max_num_seqs = max_num_seqs
        self.scripts: dict[int, PageScript] = {}
        self.requests: list[RequestRecord] = []
        self.running = 0
        self.waiting = 0
        self.max_in_flight = 0
        self.tokens_total = 0
        self._attempts: dict[str, int] = {}
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        #: each open client connection's handler task, and its writer
        self._connections: dict[asyncio.Task[None], asyncio.StreamWriter] = {}
        self._seqs: asyncio.Semaphore | None = None

    @classmethod
    def for_gpu(cls, profile: str | GpuProfile, *, speed: float = 1.0,
                tokens_per_page: int = 600, **options: Any) -> Simulator:
        """A simulator playing one GPU profile (``small``, ``rtx5090``, ``large``):
        its capacity curve, ``max_num_seqs`` admission limit and KV-cache size."""
        gpu = GPU_PROFILES[profile] if isinstance(profile, str) else profile
        return cls(latency=gpu.latency(speed, tokens_per_page), max_num_seqs=gpu.max_num_seqs,
                   kv_slots=gpu.kv_slots, synthetic_tokens=tokens_per_page, **options)

    # -- control ---------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def register(self, page_id: int, markdown: str | PageScript, **script: Any) -> PageScript:
        """Set the answer for a generated page (``markdown`` or a full :class:`PageScript`)."""
        page = markdown if isinstance(markdown, PageScript) else PageScript(markdown, **script)
        with self._lock:
            self.scripts[page_id] = page
        return page

    @property
    def open_connections(self) -> int:
        """Client connections the server is still serving: 0 once a killed client's
        last requests (already sent, perhaps not yet read) are recorded and ended."""
        return len(self._connections)

    def reset_records(self) -> None:
        with self._lock:
            self.requests.clear()
            self._attempts.clear()
            self.max_in_flight = 0
            self.tokens_total = 0

    def completions(self) -> list[RequestRecord]:
        """Chat-completion requests only, in arrival order."""
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def for_page(self, page_id: int) -> list[RequestRecord]:
        return [r for r in self.completions() if r.page_id == page_id]

    @staticmethod
    def wait_until(condition: Callable[[], bool], timeout: float = 60.0) -> bool:
        """Poll ``condition`` until it holds or ``timeout`` passes; return its last value.

        The server sees a client's disconnect on its own clock (it checks the
        socket between tokens), which may come after the client call returned. The
        timeout is generous (it returns as soon as the condition holds): a busy machine
        must not fail a test that would have passed.
        """
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() >= deadline:
                return condition()
            time.sleep(0.01)
        return True

    def start(self) -> Simulator:
        ready = threading.Event()
        errors: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                self._server = loop.run_until_complete(
                    asyncio.start_server(self._accept, self.host, self.port))
                self._seqs = asyncio.Semaphore(self.max_num_seqs)
                self.port = self._server.sockets[0].getsockname()[1]
            except BaseException as exc:
                errors.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name="ovis-simulator", daemon=True)
        self._thread.start()
        ready.wait(10)
        if errors:
            raise errors[0]
        return self

    def stop(self) -> None:
        loop, server = self._loop, self._server
        if loop is None or server is None or self._thread is None:
            return

        async def shutdown() -> None:
            server.close()
            current = asyncio.current_task()
            for _ in range(4):   # connections still being accepted end too (bounded)
                pending = [t for t in asyncio.all_tasks() if t is not current]
                if not pending:
                    break
                writers = list(self._connections.values())
                for task in self._connections:
                    task.cancel()
                await asyncio.wait(pending, timeout=1)
                # a handler cancelled before it ran closed nothing
                await asyncio.gather(*(_closed(writer) for writer in writers))
            await asyncio.sleep(0)   # connections aborted above finish closing
            await server.wait_closed()

        asyncio.run_coroutine_threadsafe(shutdown(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(10)
        self._server = None

    def __enter__(self) -> Simulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- HTTP ------------------------------------------------------------------------------

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Register a connection as it is made, so that stop() closes it even if its
        handler never got to run (a socket left open is reported when it is collected,
        in whichever later test that happens)."""
        task = asyncio.get_running_loop().create_task(self._handle(reader, writer))
        self._connections[task] = writer
        task.add_done_callback(lambda done: self._connections.pop(done, None))

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._one_request(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, Disconnected):
            pass
        except asyncio.CancelledError:
            pass
        finally:
            await _closed(writer)

    async def _one_request(self, reader: asyncio.StreamReader,
                           writer: asyncio.StreamWriter) -> bool:
        line = await reader.readline()
        if not line:
            return False
        try:
            method, target, _version = line.decode("latin-1").split(" ", 2)
        except ValueError:
            await send_json(writer, 400, {"error": {"message": "bad request line"}})
            return False
        headers: dict[str, str] = {}
        while True:
            raw = await reader.readline()
            if raw in (b"\r\n", b"\n", b""):
                break
            key, _, value = raw.decode("latin-1").partition(":")
            headers[key.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
        path = target.split("?", 1)[0]
        if not (method == "POST" and path == "/v1/chat/completions"):
            with self._lock:
                self.requests.append(RequestRecord(id=len(self.requests) + 1, path=path, body={},
                                                   start=time.monotonic(), end=time.monotonic()))
        if self.api_key and path.startswith("/v1/") and \
                headers.get("authorization") != f"Bearer {self.api_key}":
            await send_json(writer, 401, {"error": {"message": "invalid api key",
                                                    "type": "AuthenticationError"}})
            return True
        if method == "GET" and path == "/health":
            await send(writer, 200, b"", "text/plain")
        elif method == "GET" and path == "/v1/models":
            await send_json(writer, 200, {"object": "list", "data": [{
                "id": self.model, "object": "model", "created": 0, "owned_by": "vllm",
                "max_model_len": 32768}]})
        elif method == "GET" and path == "/metrics" and self.serve_metrics:
            await send(writer, 200, self._metrics().encode(), "text/plain; version=0.0.4")
        elif method == "POST" and path == "/v1/chat/completions":
            return await self._chat(reader, writer, body)
        else:
            await send_json(writer, 404, {"error": {"message": f"no route {method} {path}"}})
        return True

    def _metrics(self) -> str:
        label = f'model_name="{self.model}"'
        return (
            "# TYPE vllm:num_requests_running gauge\n"
            f"vllm:num_requests_running{{{label}}} {self.running}\n"
            "# TYPE vllm:num_requests_waiting gauge\n"
            f"vllm:num_requests_waiting{{{label}}} {self.waiting}\n"
            "# TYPE vllm:generation_tokens_total counter\n"
            f"vllm:generation_tokens_total{{{label}}} {self.tokens_total}\n"
            "# TYPE vllm:kv_cache_usage_perc gauge\n"
            f"vllm:kv_cache_usage_perc{{{label}}} {self.kv_usage:.4f}\n"
            "# TYPE vllm:num_preemptions_total counter\n"
            f"vllm:num_preemptions_total{{{label}}} {self.preemptions}\n"
        )

    @property
    def kv_usage(self) -> float:
        """Share of the KV cache in use (0-1), as ``vllm:kv_cache_usage_perc``."""
        return 0.0 if not self.kv_slots else min(1.0, self.running / self.kv_slots)

    # -- chat completions ------------------------------------------------------------------

    async def _chat(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                    raw: bytes) -> bool:
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            await send_json(writer, 400, {"error": {"message": "body is not JSON"}})
            return True
        record, problem = self._register(body)
        if problem is not None:
            record.status, record.end = problem[0], time.monotonic()
            await send_json(writer, problem[0], {"error": {
                "message": problem[1], "type": "BadRequestError", "code": problem[0]}})
            return True
        script = self.scripts.get(record.page_id) if record.page_id is not None else None
        fault = script.faults.get(record.attempt) if script is not None else None
        if isinstance(fault, HttpError):
            record.status, record.fault, record.end = fault.status, "http", time.monotonic()
            extra = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None \
                else {}
            await send_json(writer, fault.status, {"error": {
                "message": fault.message, "type": "ServerError", "code": fault.status}}, extra)
            return True
        if script is None:
            markdown = PANGRAM if record.page_key == "blank" else \
                synthetic_markdown(record.page_key.encode(), self.synthetic_tokens)
            script = PageScript(markdown)
        script = script.for_image(record.image_width or 0, seed=record.page_id or 0)
        tokens = script.tokens(greedy_unpenalized=record.greedy_unpenalized)
        max_tokens = int(body.get("max_tokens") or body.get("max_completion_tokens") or 16384)
        return await self._run(reader, writer, record, tokens, max_tokens, fault)

    def _register(self, body: dict[str, Any]) -> tuple[RequestRecord, tuple[int, str] | None]:
        """Record the request (numbered, with its attempt at its page) and what is wrong
        with it, if anything."""
        record = RequestRecord(id=0, path="/v1/chat/completions", body=_strip_images(body),
                               stream=bool(body.get("stream")), start=time.monotonic())
        problem = self._inspect(body, record)
        with self._lock:
            record.id = len(self.requests) + 1
            self.requests.append(record)
            self._attempts[record.page_key] = self._attempts.get(record.page_key, 0) + 1
            record.attempt = self._attempts[record.page_key]
        return record, problem

    async def _run(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                   record: RequestRecord, tokens: Iterator[str], max_tokens: int,
                   fault: Fault | None) -> bool:
        """Wait for one of ``max_num_seqs`` slots, then answer; the gauges of /metrics
        follow (waiting, running, preemptions when running exceeds the KV slots)."""
        assert self._seqs is not None
        self.waiting += 1
        async with self._seqs:
            self.waiting -= 1
            self.running += 1
            if self.kv_slots and self.running > self.kv_slots:
                self.preemptions += 1   # vLLM evicts a running request to make room
            record.in_flight_at_start = self.running
            self.max_in_flight = max(self.max_in_flight, self.running)
            try:
                if record.stream:
                    return await self._stream(reader, writer, record, tokens, max_tokens, fault)
                return await self._complete(writer, record, tokens, max_tokens)
            finally:
                self.running -= 1
                record.end = time.monotonic()

    def _inspect(self, body: dict[str, Any], record: RequestRecord) -> tuple[int, str] | None:
        """Validate like vLLM and identify the page; returns (status, message) on error."""
        if body.get("model") != self.model:
            return 404, f"The model `{body.get('model')}` does not exist."
        messages = body.get("messages") or []
        images: list[str] = []
        for message in messages:
            content = message.get("content")
            if isinstance(content, list):
                for part in content:
                    record.content_types.append(part.get("type", ""))
                    if part.get("type") == "image_url":
                        images.append(part.get("image_url", {}).get("url", ""))
                    elif part.get("type") == "text":
                        record.prompt = part.get("text")
            elif isinstance(content, str):
                record.content_types.append("text")
                record.prompt = content
        if len(images) != 1:
            return 400, f"At most 1 image(s) may be provided in one prompt; got {len(images)}."
        url = images[0]
        try:
            _, _, payload = url.partition(",")
            data = base64.b64decode(payload, validate=True)
            with Image.open(io.BytesIO(data)) as image:
                image.load()
                record.image_width, record.image_height = image.size
                record.image_mode = image.mode
                record.image_format = (image.format or "").lower()
                record.image_bytes = len(data)
                record.page_id, record.image_turn = read_turned_page_id(image)
                extrema = image.convert("L").getextrema()
        except (binascii.Error, UnidentifiedImageError, OSError, ValueError) as exc:
            return 400, f"cannot decode image: {exc}"
        if record.page_id is not None:
            record.page_key = f"id:{record.page_id}"
        elif extrema[0] == extrema[1]:
            record.page_key = "blank"
        else:
            record.page_key = "sha:" + _short_hash(data)
        return None

    async def _complete(self, writer: asyncio.StreamWriter, record: RequestRecord,
                        tokens: Iterator[str], max_tokens: int) -> bool:
        parts: list[str] = []
        finish = "stop"
        for token in tokens:
            if len(parts) >= max_tokens:
                finish = "length"
                break
            parts.append(token)
        record.tokens_generated = len(parts)
        self.tokens_total += len(parts)
        await asyncio.sleep(self.latency.prefill_seconds() +
                            len(parts) / self.latency.tokens_per_second(self.running))
        record.finish_reason = finish
        await send_json(writer, 200, completion(self.model, "".join(parts), finish, len(parts),
                                                   self.text_fields))
        return True

    async def _stream(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      record: RequestRecord, tokens: Iterator[str], max_tokens: int,
                      fault: Fault | None) -> bool:
        """Stream the answer as vLLM does, or break off as ``fault`` says; returns whether
        the connection can serve another request."""
        if isinstance(fault, MalformedSSE):
            record.fault = "malformed_sse"
            await send(writer, 200, b"this is not an event stream\n\x00\x01{", "text/event-stream")
            return True
        stream = CompletionStream(writer, self.model, self.stream_interval,
                                  self.sse_line_ending, self.text_fields)
        await stream.open()
        await asyncio.sleep(self.latency.prefill_seconds())
        self._check_client(reader, record)
        await stream.send_role()
        if isinstance(fault, MalformedJSON):
            record.fault = "malformed_json"
            await stream.send_raw("{not json")
            await stream.end()
            return True
        cut = fault if isinstance(fault, (Reset, Hang, EndWithoutFinish, GiveUp)) else None
        limit = max_tokens
        if cut is not None:
            limit = min(max_tokens, cut.after_tokens)
            record.fault = type(cut).__name__.lower()
        produced, finish = await self._decode(reader, record, tokens, limit, stream)
        await stream.send_tokens([], flush=True)
        if isinstance(cut, GiveUp):   # ends like any answer, with the engine's reason
            finish = cut.reason
        elif cut is not None:
            return await self._break_off(reader, writer, record, cut, stream)
        record.finish_reason = finish
        await stream.finish(record.finish_reason, produced)
        return True

    async def _decode(self, reader: asyncio.StreamReader, record: RequestRecord,
                      tokens: Iterator[str], limit: int,
                      stream: CompletionStream) -> tuple[int, str]:
        """Generate at the latency model's pace (slower with more requests running) until
        the script ends or ``limit`` tokens; returns the count and "stop" or "length"."""
        iterator = iter(tokens)
        produced, due, last = 0, 0.0, time.monotonic()
        while produced < limit:
            rate = self.latency.tokens_per_second(self.running)
            await asyncio.sleep(max(_MIN_TICK, 1.0 / rate))
            now = time.monotonic()
            due, last = due + (now - last) * rate, now
            self._check_client(reader, record)
            wanted = min(int(due), limit - produced)
            batch = list(itertools.islice(iterator, wanted))
            produced, due = produced + len(batch), due - len(batch)
            record.tokens_generated = produced
            self.tokens_total += len(batch)
            await stream.send_tokens(batch)
            if len(batch) < wanted:
                return produced, "stop"
        return produced, "length"

    async def _break_off(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                         record: RequestRecord, fault: Reset | Hang | EndWithoutFinish,
                         stream: CompletionStream) -> bool:
        """End a stream the faulty way: reset the connection, hang until the client gives
        up (or the simulator stops), or end the body without a finish event."""
        if isinstance(fault, Reset):
            writer.transport.abort()
            raise Disconnected
        if isinstance(fault, Hang):
            while True:
                await asyncio.sleep(0.05)
                self._check_client(reader, record)
        await stream.end()
        return False

    @staticmethod
    def _check_client(reader: asyncio.StreamReader, record: RequestRecord) -> None:
        """Raise if the client has gone: a clean close (EOF) or a reset (a client that
        closes with unread data in its socket sends RST, which ends no stream with EOF)."""
        if reader.at_eof() or reader.exception() is not None:
            record.disconnected = True
            raise Disconnected


def _strip_images(body: dict[str, Any]) -> dict[str, Any]:
    """A copy of the body whose image data URLs are shortened (records stay small)."""
    copy: dict[str, Any] = json.loads(json.dumps(body))
    for message in copy.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            for part in content:
                if part.get("type") == "image_url":
                    url = part.get("image_url", {}).get("url", "")
                    part["image_url"]["url"] = url[:40] + "..."
    return copy


def _short_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


async def _closed(writer: asyncio.StreamWriter) -> None:
    """Close a connection for good before the loop ends: its answer flushed if the client
    takes it within a second, else dropped (a client that stopped reading). One left
    half-closed is reported as unclosed when it is collected, in a later test. The
    wait is shielded: cancelling it must not cancel the connection's own close future,
    which every later ``wait_closed()`` would then raise at once."""
    try:
        writer.close()
        await asyncio.wait_for(asyncio.shield(writer.wait_closed()), 1)
    except (Exception, asyncio.CancelledError):
        writer.transport.abort()
