"""What the simulated model answers for a page, including its failure modes.

A :class:`PageScript` is registered per page id. ``loop`` makes the page loop
the way OvisOCR2 does under greedy decoding: only when the request carries no
penalty, so the recipe's penalized retry heals it. ``faults`` are keyed by the
1-based number of the request seen for that page.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Literal

LoopKind = Literal["digits", "o", "emoji", "think"]

PANGRAM = "The quick brown fox jumps over the lazy dog."

_TOKEN = re.compile(r"\s*\S{1,4}|\s+")
_EMOJI = "😀😂🎉👍🔥✨💯🙏🚀🌟😍🤖📄✅"


def tokenize(text: str) -> list[str]:
    """Split text into model-like tokens (about 4 characters each)."""
    return _TOKEN.findall(text)


@dataclass(frozen=True)
class HttpError:
    """Answer with an HTTP error status (vLLM-style JSON error body)."""

    status: int
    retry_after: float | None = None
    message: str = "simulated server error"


@dataclass(frozen=True)
class Reset:
    """Stream ``after_tokens`` tokens, then reset the connection (RST)."""

    after_tokens: int = 5


@dataclass(frozen=True)
class Hang:
    """Accept the request and send nothing (after ``after_tokens`` tokens, if set)."""

    after_tokens: int = 0


@dataclass(frozen=True)
class MalformedJSON:
    """Send an SSE event whose data is not JSON."""


@dataclass(frozen=True)
class MalformedSSE:
    """Answer 200 text/event-stream with bytes that are not SSE at all."""


@dataclass(frozen=True)
class EndWithoutFinish:
    """Stream some tokens and end the body without a finish reason or [DONE]."""

    after_tokens: int = 5


@dataclass(frozen=True)
class GiveUp:
    """Stream some tokens, then finish with a reason vLLM's engine gives a request it
    gave up on: ``abort`` (aborted) or ``error`` (a retryable internal error)."""

    after_tokens: int = 5
    reason: str = "abort"


Fault = HttpError | Reset | Hang | MalformedJSON | MalformedSSE | EndWithoutFinish | GiveUp


@dataclass
class PageScript:
    """The answer for one page.

    ``markdown`` is the clean page. With ``loop`` set, a greedy request without
    penalty emits the first ``loop_after`` characters of it and then loops
    until the token cap or a disconnect; a penalized request gets the clean
    page. ``loop_on_retry`` keeps the loop even under a penalty.
    """

    markdown: str
    loop: LoopKind | None = None
    loop_after: int | None = None
    loop_on_retry: bool = False
    faults: dict[int, Fault] = field(default_factory=dict)
    #: (width in pixels, word error rate): an image narrower than that is read with
    #: that share of its words wrong, as a low DPI fuses small print
    low_resolution: tuple[int, float] | None = None

    def for_image(self, width: int, seed: int = 0) -> PageScript:
        """The script for an image ``width`` pixels wide."""
        if self.low_resolution is None or width >= self.low_resolution[0]:
            return self
        return replace(self, markdown=with_word_errors(self.markdown, self.low_resolution[1],
                                                       seed))

    def tokens(self, *, greedy_unpenalized: bool) -> Iterator[str]:
        """The token stream for one request (infinite for a loop)."""
        looping = self.loop is not None and (greedy_unpenalized or self.loop_on_retry)
        if not looping:
            yield from tokenize(self.markdown)
            return
        cut = self.loop_after if self.loop_after is not None else len(self.markdown) // 2
        yield from tokenize(self.markdown[:cut])
        yield from _loop_tokens(self.loop or "digits")


_PLAIN_WORD = re.compile(r"^([A-Za-z]+)([.,;:!?]?)$")


def with_word_errors(text: str, rate: float, seed: int = 0) -> str:
    """``text`` with ``round(rate * n)`` of its ``n`` plain words (letters, with at most
    one trailing punctuation mark) replaced by words that are in no reference
    (``zqa``, ``zqb`` ...), chosen at random from ``seed``. For text made of plain words
    the word-level F1 of the result against ``text`` is exactly ``1 - rate`` (rounded
    to whole words): precision and recall both lose the same words."""
    if not 0 <= rate <= 1:
        raise ValueError(f"rate must be between 0 and 1, got {rate}")
    tokens = re.split(r"(\s+)", text)
    plain = [i for i, token in enumerate(tokens) if _PLAIN_WORD.match(token)]
    chosen = random.Random(seed).sample(plain, round(rate * len(plain)))
    for number, index in enumerate(sorted(chosen)):
        match = _PLAIN_WORD.match(tokens[index])
        assert match is not None
        tokens[index] = _wrong_word(number) + match.group(2)
    return "".join(tokens)


def _wrong_word(number: int) -> str:
    letters = ""
    number += 1
    while number:
        number, rest = divmod(number - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return "zq" + letters


def _loop_tokens(kind: LoopKind) -> Iterator[str]:
    if kind == "digits":
        while True:
            yield "1111"
    elif kind == "o":
        yield "\n\nO"
        while True:
            yield " O"
    elif kind == "emoji":
        rng = random.Random(7)
        while True:
            yield "".join(rng.choice(_EMOJI) for _ in range(2))
    else:
        yield "\n\n<think>\n\n</think>\n\n"
        n = 1
        while True:
            yield f"## {n}\n"
            n += 1


_WORDS = (
    "patient report results table analysis method sample value clinical reference range "
    "measurement protocol summary figure data section total annual review committee record "
    "signature date page department office account balance invoice amount letter request"
).split()


def synthetic_markdown(seed: bytes, tokens: int = 600) -> str:
    """Deterministic, realistic-looking page Markdown of about ``tokens`` tokens."""
    rng = random.Random(hashlib.sha256(seed).digest())
    parts = [f"# {rng.choice(_WORDS).title()} {rng.choice(_WORDS).title()}"]
    count = len(tokenize(parts[0]))
    while count < tokens:
        sentence_count = rng.randint(3, 6)
        sentences = []
        for _ in range(sentence_count):
            words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 14))]
            sentences.append(" ".join(words).capitalize() + ".")
        paragraph = " ".join(sentences)
        parts.append(paragraph)
        count += len(tokenize(paragraph))
    return "\n\n".join(parts)


def long_markdown(tokens: int, seed: bytes = b"long") -> str:
    """A genuinely long, clean page (e.g. 6000 tokens: over the 4096 first-pass cap)."""
    return synthetic_markdown(seed, tokens)
