"""All requests for one page: the field recipe against loops, plus transport retries.

1. First pass: greedy, no penalty, ``first_max_tokens`` (4096), guarded.
2. A degenerate tail (or an empty answer) closes the stream and the page is
   retried once with ``frequency_penalty`` (0.3), same cap.
3. A clean tail that hit the cap is a genuinely long page: retried once with
   ``long_max_tokens`` (16384), guarded, never penalized.
4. If the retry degenerates too, the longest clean prefix is kept and the page
   is flagged ``loop_trimmed``; garbage never reaches the result.

A loop never ends on its own: it runs to the cap. So repetition in a text the
model ended itself (finish ``stop``) is legitimate (a sign-in sheet, a repeated
form line) and is kept. The penalized retry therefore only aborts early on
garbage that is never legitimate (think marker, emoji flood) and judges
repetition at the end: a page that truly repeats a line loses nothing.

Every HTTP try is recorded as an :class:`Attempt`; this module holds the one
loop that sleeps between transport retries.
"""

from __future__ import annotations

import asyncio
import logging
import random
from dataclasses import dataclass, field

from ..config import RetryPolicy
from ..document import Attempt, AttemptPurpose, PageErrorInfo
from ..errors import OvisLoaderError, ServerProtocolError, ServerStatusError
from .endpoints import Endpoint, EndpointPool
from .guard import ALWAYS_GARBAGE, StreamGuard
from .request import ChatRequest, DecodeParams, RequestRecipe
from .retry import next_delay, should_retry

log = logging.getLogger("ovisocr_loader")

#: finish reasons of a request vLLM's engine gave up on (aborted, or a retryable
#: internal error): the text streamed so far is no page, the try failed
GAVE_UP = frozenset({"abort", "error"})


@dataclass
class PageOutcome:
    """The final text of a page and how it was obtained."""

    markdown: str = ""
    attempts: list[Attempt] = field(default_factory=list)
    loop_trimmed: bool = False
    truncated: bool = False
    error: PageErrorInfo | None = None
    exception: OvisLoaderError | None = None


@dataclass
class _Pass:
    """One logical pass (possibly several HTTP tries) after its transport retries."""

    clean_text: str
    finish_reason: str | None
    degenerate: bool

    @property
    def usable(self) -> bool:
        return not self.degenerate and bool(self.clean_text.strip())


class PageClient:
    """Runs the recipe for one page image; each try goes to the pool's least busy endpoint."""

    def __init__(self, pool: EndpointPool, recipe: RequestRecipe, retry: RetryPolicy,
                 rng: random.Random | None = None) -> None:
        self.pool = pool
        self.recipe = recipe
        self.guard = recipe.guard
        self.retry = retry
        self._rng = rng or random.Random()

    async def run(self, data_url: bytes) -> PageOutcome:
        """Every pass one page image (its PNG as a ``data:`` URL) needs."""
        outcome = PageOutcome()
        try:
            await self._recipe(data_url, outcome)
        except OvisLoaderError as exc:
            outcome.markdown = ""
            outcome.exception = exc
            outcome.error = PageErrorInfo.from_exception(exc, attempts=len(outcome.attempts))
        return outcome

    async def _recipe(self, data_url: bytes, outcome: PageOutcome) -> None:
        recipe = self.recipe
        first = await self._pass(data_url, recipe.first(), "first", outcome)
        if first.usable and first.finish_reason != "length":
            outcome.markdown = first.clean_text
            return
        if first.usable:  # clean tail at the cap: a genuinely long page
            retry = await self._pass(data_url, recipe.long_retry(), "long_retry", outcome)
        else:
            retry = await self._pass(data_url, recipe.loop_retry(), "loop_retry", outcome)
        if retry.usable:
            outcome.markdown = retry.clean_text
            outcome.truncated = retry.finish_reason == "length"
            return
        best = max((first.clean_text, retry.clean_text), key=len).rstrip()
        if not best and not first.degenerate and not retry.degenerate:
            raise ServerProtocolError("the model returned no text, twice", url=self.pool.urls)
        outcome.markdown = best
        outcome.loop_trimmed = True
        log.warning("page output degenerated twice; kept %d clean characters", len(best))

    async def _pass(self, data_url: bytes, params: DecodeParams, purpose: AttemptPurpose,
                    outcome: PageOutcome) -> _Pass:
        """One logical pass: HTTP tries until one answers, within the retry policy.

        A try that fails because the server went away (the pool is in an outage)
        does not count against ``max_attempts``: the next one waits in
        :meth:`EndpointPool.acquire` until the server answers or ``server_wait`` ends.
        """
        request = self.recipe.build(data_url, params)
        number = 0
        failed_on: Endpoint | None = None
        while True:
            number += 1
            endpoint = await self.pool.acquire(avoid=failed_on)
            try:
                return await self._try(endpoint, request, params, purpose, outcome)
            except OvisLoaderError as exc:
                failed_on = endpoint
                if self.pool.in_outage:
                    number -= 1
                    continue
                if number == self.retry.max_attempts or not should_retry(exc, self.retry):
                    raise
                retry_after = exc.retry_after if isinstance(exc, ServerStatusError) else None
                await asyncio.sleep(next_delay(number, self.retry, retry_after, self._rng))
            finally:
                self.pool.release(endpoint)

    async def _try(self, endpoint: Endpoint, request: ChatRequest, params: DecodeParams,
                   purpose: AttemptPurpose, outcome: PageOutcome) -> _Pass:
        """One HTTP request, recorded as an :class:`Attempt` whatever happens."""
        guard = StreamGuard(self.guard, ALWAYS_GARBAGE if purpose == "loop_retry" else None)
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            result = await endpoint.transport.stream(request, guard.feed,
                                                     lambda: self.pool.alive(endpoint, started))
            if result.finish_reason is None:
                raise ServerProtocolError("stream ended without a finish reason",
                                          url=endpoint.url)
            if result.finish_reason in GAVE_UP:   # the text so far is a fragment
                raise ServerProtocolError(f"the server gave up on the answer (finish_reason "
                                          f"{result.finish_reason!r})", url=endpoint.url)
        except OvisLoaderError as exc:
            self.pool.failed(endpoint, exc)
            outcome.attempts.append(Attempt(
                purpose=purpose, params=params.as_record(), finish_reason="error",
                latency_s=loop.time() - started, endpoint=endpoint.url,
                error=f"{type(exc).__name__}: {exc.reason}"))
            raise
        self.pool.succeeded(endpoint, started)
        verdict = result.degenerate or guard.finish()
        if verdict is not None and verdict.kind not in ALWAYS_GARBAGE and \
                result.finish_reason == "stop":
            verdict = None  # the model ended the page itself: repetition was legitimate
        degenerate = verdict is not None or result.finish_reason == "repetition"
        clean = result.text[:verdict.clean_end] if verdict is not None else result.text
        outcome.attempts.append(Attempt(
            purpose=purpose, params=params.as_record(), finish_reason=result.finish_reason,
            completion_tokens=result.completion_tokens, chars=len(result.text),
            prompt_tokens=result.prompt_tokens, latency_s=result.latency_s,
            first_token_s=result.first_token_s, aborted=result.degenerate is not None,
            endpoint=endpoint.url,
            degenerate=verdict.kind if verdict is not None else
            ("repetition" if degenerate else None)))
        return _Pass(clean if not degenerate else clean.rstrip(), result.finish_reason,
                     degenerate)
