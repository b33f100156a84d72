"""A second, independent vLLM-like server for checking the adaptive controller.

The package's simulator (``ovisocr_loader.testing``) interpolates a measured
throughput curve and fills its KV cache per request: the controller was tuned on
it. This one shares nothing with it but the HTTP API. Nothing here is a curve:
an engine loop runs decode steps, as continuous batching does, and throughput,
the elbow, queueing and thrashing come out of that:

- a step lasts ``base + per_seq * batch + per_kv * KV tokens held + prefill``; each
  running request gains one token per step;
- a request holds KV for its prompt and every token generated so far, so KV usage
  grows *during* a request (not per request);
- requests beyond ``max_num_seqs``, or whose prompt does not fit in the free KV,
  wait in a queue (``vllm:num_requests_waiting``);
- when a step needs more KV than is free, the newest request is preempted (its KV
  freed, prefilled again when readmitted), as vLLM V1 does;
- answers are 150-450 tokens (``--tokens``), drawn from the request's image;
- as vLLM, a streamed answer is one server-sent event per token, or one per
  ``--stream-interval`` tokens; the last token's event carries the finish reason, then
  the usage chunk (if asked for) and ``[DONE]``; an unstreamed answer comes whole.

Run alone: ``python benchmarks/batching_server.py --profile small`` (prints its URL).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import random
import subprocess
import sys
import time
from collections import deque
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field

from aiohttp import web

MODEL = "ATH-MaaS/OvisOCR2"
WORDS = ("annual report revenue income total cost net tax asset liability cash equity "
         "operating segment fiscal year quarter interest expense margin growth share "
         "dividend capital loss gain market value balance sheet statement note").split()


@dataclass(frozen=True)
class Gpu:
    """How one server's steps cost time and how much KV it holds (times in ms)."""

    max_num_seqs: int
    kv_tokens: int
    step_base: float
    per_seq: float
    per_kv_ktoken: float
    prefill_per_ktoken: float
    prompt_tokens: int = 1200
    prefill_budget: int = 8192


#: A small card: the KV cache holds ~15 requests at full length; admitting more
#: thrashes (preemptions). A big one: admission (max_num_seqs) binds first and the
#: rest queue. A big one whose KV cache binds first (~125 requests), admitting
#: freely (so it preempts), with attention over the cache slowing big batches.
PROFILES = {
    "small": Gpu(max_num_seqs=256, kv_tokens=22_000, step_base=14.0, per_seq=0.5,
                 per_kv_ktoken=0.15, prefill_per_ktoken=6.0),
    "big": Gpu(max_num_seqs=96, kv_tokens=400_000, step_base=12.0, per_seq=0.08,
               per_kv_ktoken=0.05, prefill_per_ktoken=1.5),
    "big-kv": Gpu(max_num_seqs=512, kv_tokens=190_000, step_base=12.0, per_seq=0.08,
                  per_kv_ktoken=0.05, prefill_per_ktoken=1.5),
    # The field's RTX 5090 serving OvisOCR2: a page of 300-800 tokens takes ~3 s at
    # 32 in flight (~570 pages/min); the KV cache holds ~40 such requests.
    "rtx5090": Gpu(max_num_seqs=256, kv_tokens=64_000, step_base=2.5, per_seq=0.08,
                   per_kv_ktoken=0.02, prefill_per_ktoken=2.0),
}


@dataclass(eq=False)
class Request:
    answer: list[str]
    tokens: asyncio.Queue[str | None] = field(default_factory=asyncio.Queue)
    generated: int = 0
    kv: int = 0
    prefill_left: int = 0
    gone: bool = False


class Engine:
    """The scheduler and the decode steps (one asyncio task)."""

    CATCH_UP_S = 0.05

    def __init__(self, gpu: Gpu, speed: float) -> None:
        self.gpu, self.speed = gpu, speed
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []
        self.preemptions = 0
        self.tokens_total = 0
        self.wake = asyncio.Event()

    @property
    def kv_used(self) -> int:
        return sum(r.kv for r in self.running)

    def submit(self, request: Request) -> None:
        self.waiting.append(request)
        self.wake.set()

    async def run(self) -> None:
        """Steps on a clock of their own: a step that starts late (this process waited
        for the CPU) is made up by the next ones, as a GPU does not wait for the CPU
        of the machine beside it; at most ``CATCH_UP_S`` is made up."""
        due = time.monotonic()
        while True:
            if not self.running and not self.waiting:
                self.wake.clear()
                await self.wake.wait()
                due = time.monotonic()
            due = max(due, time.monotonic() - self.CATCH_UP_S) + self.step() / 1000 / self.speed
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            self.emit()

    def step(self) -> float:
        """Admit, prefill, make room, decode; the step's duration in ms."""
        self.running = [r for r in self.running if not r.gone]
        self.waiting = deque(r for r in self.waiting if not r.gone)
        self.admit()
        prefilled = self.prefill()
        decoding = [r for r in self.running if r.prefill_left == 0]
        while decoding and self.kv_used + len(decoding) > self.gpu.kv_tokens:
            self.preempt(decoding)
        for request in decoding:
            request.kv += 1
        g = self.gpu
        return (g.step_base + g.per_seq * len(decoding) + g.per_kv_ktoken * self.kv_used / 1000
                + g.prefill_per_ktoken * prefilled / 1000)

    def admit(self) -> None:
        while self.waiting and len(self.running) < self.gpu.max_num_seqs:
            head = self.waiting[0]
            need = self.gpu.prompt_tokens + head.generated
            if self.kv_used + need > self.gpu.kv_tokens:
                return
            self.waiting.popleft()
            head.prefill_left = need
            self.running.append(head)

    def prefill(self) -> int:
        budget = self.gpu.prefill_budget
        for request in self.running:
            if request.prefill_left and budget:
                chunk = min(budget, request.prefill_left)
                request.prefill_left -= chunk
                request.kv += chunk
                budget -= chunk
        return self.gpu.prefill_budget - budget

    def preempt(self, decoding: list[Request]) -> None:
        victim = self.running.pop()
        if victim in decoding:
            decoding.remove(victim)
        victim.kv, victim.prefill_left = 0, 0
        self.waiting.appendleft(victim)
        self.preemptions += 1

    def emit(self) -> None:
        """The tokens of the step just run (one per decoding request)."""
        for request in list(self.running):
            if request.prefill_left or request.kv <= self.gpu.prompt_tokens + request.generated:
                continue
            request.tokens.put_nowait(request.answer[request.generated])
            request.generated += 1
            self.tokens_total += 1
            if request.generated == len(request.answer):
                request.tokens.put_nowait(None)
                self.running.remove(request)

    def metrics(self) -> str:
        label = f'{{model_name="{MODEL}"}}'
        return "".join(f"vllm:{name}{label} {value}\n" for name, value in (
            ("num_requests_running", len(self.running)),
            ("num_requests_waiting", len(self.waiting)),
            ("kv_cache_usage_perc", f"{self.kv_used / self.gpu.kv_tokens:.4f}"),
            ("num_preemptions_total", self.preemptions),
            ("generation_tokens_total", self.tokens_total)))


class VirtualClient:
    """One closed-loop client in virtual time: a new page as soon as one ends while
    fewer than ``limit`` are in flight (a lowered limit lets requests finish)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.completed = 0
        self.in_flight: list[Request] = []
        self._streamed_by_finished = 0

    @property
    def streamed(self) -> int:
        """Tokens received so far (what the package's client counts, in characters)."""
        return self._streamed_by_finished + sum(r.generated for r in self.in_flight)

    def top_up(self, engine: Engine, rng: random.Random) -> None:
        while len(self.in_flight) < self.limit:
            request = Request([f"w{i} " for i in range(rng.randint(150, 450))])
            self.in_flight.append(request)
            engine.submit(request)

    def collect(self) -> None:
        still = [r for r in self.in_flight if r.generated < len(r.answer)]
        self.completed += len(self.in_flight) - len(still)
        self._streamed_by_finished += sum(r.generated for r in self.in_flight
                                          if r.generated >= len(r.answer))
        self.in_flight = still


class VirtualServer:
    """The engine stepped in virtual time for any number of clients. No HTTP, no
    clock: seconds of server time in milliseconds of CPU, the same every run."""

    def __init__(self, gpu: Gpu, seed: int = 0) -> None:
        self.engine = Engine(gpu, speed=1.0)
        self.rng = random.Random(seed)
        self.now = 0.0
        self.clients: list[VirtualClient] = []

    def add(self, limit: int) -> VirtualClient:
        client = VirtualClient(limit)
        self.clients.append(client)
        return client

    def run(self, seconds: float) -> None:
        """Advance ``seconds`` of server time."""
        end = self.now + seconds
        while self.now < end:
            for client in self.clients:
                client.top_up(self.engine, self.rng)
            self.now += self.engine.step() / 1000
            self.engine.emit()
            for client in self.clients:
                client.collect()

    def load(self) -> tuple[int, int, float, int]:
        """(running, waiting, KV usage, preemptions so far), as /metrics says them."""
        engine = self.engine
        return (len(engine.running), len(engine.waiting),
                engine.kv_used / engine.gpu.kv_tokens, engine.preemptions)


@dataclass(frozen=True)
class Answers:
    """How long answers are and how they are streamed."""

    tokens: tuple[int, int] = (150, 450)
    stream_interval: int = 1

    def words(self, body: dict[str, object]) -> list[str]:
        """Words drawn from the request's image (the same page, the same answer)."""
        rng = random.Random(hashlib.sha256(json.dumps(body["messages"]).encode()).digest())
        return [rng.choice(WORDS) + " " for _ in range(rng.randint(*self.tokens))]


class Held:
    """How many requests the clients kept on the server, on average, since the last
    look: a client that sees a page end late, or sends the next one late, holds fewer."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.last = 0.0
        self.seconds = 0.0
        self.requests = 0
        self.tokens = 0

    def add(self, started: float, tokens: int) -> None:
        now = time.monotonic()
        self.first = started if self.first is None else min(self.first, started)
        self.last = max(self.last, now)
        self.seconds += now - started
        self.requests += 1
        self.tokens += tokens

    def take(self) -> dict[str, float]:
        span = self.last - self.first if self.first is not None else 0.0
        look = {"requests": self.requests, "tokens": self.tokens, "span_s": span,
                "mean_held": self.seconds / span if span else 0.0}
        self.__init__()  # type: ignore[misc]
        return look


def app_for(engine: Engine, answers: Answers = Answers()) -> web.Application:
    held = Held()

    async def chat(request: web.Request) -> web.StreamResponse:
        started = time.monotonic()
        body = await request.json()
        job = Request(answers.words(body))
        engine.submit(job)
        if not body.get("stream"):
            whole = await _whole(job)
            held.add(started, len(job.answer))
            return whole
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        try:
            await _streamed(job, response, answers.stream_interval, usage)
        except (ConnectionError, asyncio.CancelledError):
            job.gone = True
            raise
        held.add(started, len(job.answer))
        return response

    async def stats(_: web.Request) -> web.Response:
        return web.json_response(held.take())

    async def models(_: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [
            {"id": MODEL, "object": "model", "owned_by": "vllm"}]})

    async def metrics(_: web.Request) -> web.Response:
        return web.Response(text=engine.metrics())

    async def health(_: web.Request) -> web.Response:
        return web.Response()

    app = web.Application()
    app.add_routes([web.post("/v1/chat/completions", chat), web.get("/v1/models", models),
                    web.get("/metrics", metrics), web.get("/health", health),
                    web.get("/v1/stats", stats)])
    return app


async def _streamed(job: Request, response: web.StreamResponse, interval: int,
                    usage: bool) -> None:
    """One event per ``interval`` tokens, the finish reason on the last."""
    held: list[str] = []
    sent = 0
    while (token := await job.tokens.get()) is not None:
        held.append(token)
        sent += 1
        if len(held) == interval and sent < len(job.answer):
            await response.write(_event({"content": "".join(held)}, None))
            held = []
    tail = _event({"content": "".join(held)}, "stop")
    if usage:
        tail += _usage_event(len(job.answer))
    await response.write(tail + b"data: [DONE]\n\n")


async def _whole(job: Request) -> web.Response:
    try:
        words = [token async for token in _tokens(job)]
    except asyncio.CancelledError:
        job.gone = True
        raise
    return web.json_response({
        "id": "cmpl-batching", "object": "chat.completion", "created": int(time.time()),
        "model": MODEL, "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "".join(words)}}],
        "usage": _usage(len(words))})


async def _tokens(job: Request) -> AsyncIterator[str]:
    while (token := await job.tokens.get()) is not None:
        yield token


def _usage(completion: int) -> dict[str, int]:
    prompt = 1200
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


def _usage_event(completion: int) -> bytes:
    chunk = {"object": "chat.completion.chunk", "model": MODEL, "choices": [],
             "usage": _usage(completion)}
    return f"data: {json.dumps(chunk)}\n\n".encode()


def _event(delta: dict[str, str], finish: str | None) -> bytes:
    chunk = {"object": "chat.completion.chunk", "model": MODEL,
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(chunk)}\n\n".encode()


async def serve(profile: str, speed: float, port: int, answers: Answers = Answers()) -> None:
    engine = Engine(PROFILES[profile], speed)
    runner = web.AppRunner(app_for(engine, answers), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    bound = runner.addresses[0][1]
    print(f"http://127.0.0.1:{bound}/v1", flush=True)
    await engine.run()


@contextlib.contextmanager
def launched(*flags: str) -> Iterator[str]:
    """This server in a child process, started with ``flags``; its base URL."""
    proc = subprocess.Popen([sys.executable, __file__, *flags], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("--profile", choices=sorted(PROFILES), default="small")
    args.add_argument("--speed", type=float, default=1.0, help="time runs this much faster")
    args.add_argument("--port", type=int, default=0)
    args.add_argument("--tokens", default="150-450", help="answer lengths, LOW-HIGH")
    args.add_argument("--stream-interval", type=int, default=1,
                      help="tokens per streamed event (vLLM's flag)")
    opts = args.parse_args()
    low, high = (int(v) for v in opts.tokens.split("-"))
    try:
        asyncio.run(serve(opts.profile, opts.speed, opts.port,
                          Answers((low, high), opts.stream_interval)))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
