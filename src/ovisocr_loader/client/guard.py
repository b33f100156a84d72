"""Degenerate-tail detection over streamed text (pure).

OvisOCR2 decoded greedily loops on ~0.5% of pages (``1111…``, ``O O O …``,
emoji spam) until the token cap, and sometimes emits an empty ``<think></think>``
block followed by counter garbage (``## 1``, ``## 2`` …). The guard watches the
stream and names the first character of the garbage, so the caller can close
the stream at once and keep the clean prefix.

It must never fire on legitimate repetition, which has a different shape:

* a table of identical empty rows repeats a unit that holds HTML markup; such
  units must repeat ``min_markup_repeats`` (100) times, far more than real tables;
* dotted leaders and form rules are periodic only within one line (< 400 chars);
* numbered lists and page counters are not periodic at all.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from ..config import GuardPolicy

DegenerateKind = Literal["repetition", "think_marker", "symbol_flood", "low_diversity"]

#: Kinds that are garbage wherever they appear; repetition kinds may be legitimate
#: when the model ends the page on its own (a loop never does: it runs to the cap).
ALWAYS_GARBAGE: frozenset[str] = frozenset({"think_marker", "symbol_flood"})

_THINK_MARKER = re.compile(r"(?:^|\n)[ \t]*<think>\s*</think>")
_SYMBOL_WINDOW = 240
_WORD_CHAR = re.compile(r"[^\W_]")
#: every byte but ASCII letters and digits (a page's text is mostly those)
_NOT_ASCII_WORD = bytes(b for b in range(256) if b >= 128 or not chr(b).isalnum())
_DIVERSITY_WINDOW = 800
_DIVERSITY_PEEK = 40
_SPACES = frozenset(" \n\t")


@dataclass(frozen=True)
class Degenerate:
    """Where the garbage starts (``clean_end``: length of the clean prefix) and why."""

    kind: DegenerateKind
    clean_end: int
    period: int = 0


def find_degenerate(text: str, policy: GuardPolicy) -> Degenerate | None:
    """Return the first degenerate tail found at the end of ``text``, or None."""
    marker = _THINK_MARKER.search(text)
    if marker is not None:
        return Degenerate("think_marker", marker.start())
    loop = _periodic_tail(text, policy)
    if loop is not None:
        return loop
    flood = _symbol_flood(text)
    if flood is not None:
        return flood
    return _low_diversity(text)


def _periodic_tail(text: str, policy: GuardPolicy) -> Degenerate | None:
    n = len(text)
    echo = _shortest_echo(policy)
    if echo and (n <= echo or text.find(text[n - echo:], max(0, n - echo - policy.max_period),
                                        n - 1) < 0):
        return None   # the tail stands nowhere one period earlier: no loop (one C search)
    last = text[-1:] if n else ""
    for period in range(1, min(policy.max_period, n // 2) + 1):
        if text[n - 1 - period] != last:
            continue
        unit = text[n - period:]
        needed = max(policy.min_loop_repeats, -(-policy.min_loop_chars // period))
        if "<" in unit and ">" in unit:
            needed = max(needed, policy.min_markup_repeats)
        if needed * period > n or not text.endswith(unit * needed):
            continue
        start = n - _repeats(text, unit, needed) * period
        # Step back over a partial unit that also belongs to the loop.
        while start > 0 and text[start - 1] == text[start - 1 + period]:
            start -= 1
        return Degenerate("repetition", start, period)
    return None


@functools.lru_cache(maxsize=8)
def _shortest_echo(policy: GuardPolicy) -> int:
    """How many characters at the end of any loop the guard accepts also stand one
    period earlier: a periodic tail of length L and period p repeats its last L - p
    characters p before, and an accepted loop is at least ``needed * p`` long."""
    return min((max(policy.min_loop_repeats, -(-policy.min_loop_chars // period)) - 1) * period
               for period in range(1, policy.max_period + 1))


def _repeats(text: str, unit: str, known: int) -> int:
    """How many whole copies of ``unit`` end ``text`` (at least ``known``)."""
    low, high = known, known * 2
    while text.endswith(unit * high):
        low, high = high, high * 2
    while high - low > 1:
        mid = (low + high) // 2
        if text.endswith(unit * mid):
            low = mid
        else:
            high = mid
    return low


def _is_symbol(char: str) -> bool:
    return unicodedata.category(char) in ("So", "Sk", "Cs", "Co") or char in "\u200d\ufe0f"


def _symbol_flood(text: str) -> Degenerate | None:
    """Emoji spam: a window of pictographs with hardly any letters in it."""
    tail = text[-_SYMBOL_WINDOW:]
    if len(tail) < _SYMBOL_WINDOW:
        return None
    # letters and digits are no symbols: with more than a fifth of them (most pages,
    # counted in C) there is no flood, and no character needs its category looked up
    visible = len(tail.replace(" ", "").replace("\n", ""))
    ascii_words = len(tail.encode("utf-8").translate(None, _NOT_ASCII_WORD))  # a lower bound
    if ascii_words > 0.2 * visible or len(_WORD_CHAR.findall(tail)) > 0.2 * visible:
        return None
    if sum(1 for ch in tail if _is_symbol(ch)) < 0.8 * visible:
        return None
    start = len(text) - len(tail)
    while start > 0 and (_is_symbol(text[start - 1]) or text[start - 1] in " \n"):
        start -= 1
    return Degenerate("symbol_flood", start)


def _low_diversity(text: str) -> Degenerate | None:
    """A long tail written with at most two distinct visible characters (``1 11 1 111``)."""
    tail = text[-_DIVERSITY_WINDOW:]
    if len(tail) < _DIVERSITY_WINDOW or len(set(tail[-_DIVERSITY_PEEK:]) - _SPACES) > 2:
        return None   # three visible characters among the last few already
    visible = set(tail) - _SPACES
    if len(visible) > 2:
        return None
    start = len(text) - len(tail)
    while start > 0 and (text[start - 1] in visible or text[start - 1] in " \n\t"):
        start -= 1
    return Degenerate("low_diversity", start)


class StreamGuard:
    """Feeds streamed deltas and checks the tail every ``check_every_chars``.

    ``abort_on`` limits which kinds stop the stream; the others are only
    reported by :meth:`finish`, once the model has ended (or hit the cap).

    A check looks at a bounded tail (:func:`tail_window`), so its cost does not
    grow with the text already seen; the think marker is searched in new text
    only. Only a verdict whose garbage fills the whole window is traced back
    over the full text, once.
    """

    def __init__(self, policy: GuardPolicy, abort_on: frozenset[str] | None = None) -> None:
        self.policy = policy
        self.abort_on = abort_on
        self._parts: list[str] = []
        self._length = 0
        self._tail = ""
        self._window = tail_window(policy)
        self._checked_at = 0
        self._parts_seen = 0
        self._marker_at = 0   # the think marker was searched up to here

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def feed(self, delta: str) -> Degenerate | None:
        self._parts.append(delta)
        self._length += len(delta)
        due = self._length - self._checked_at >= self.policy.check_every_chars
        if not due and "<think>" not in delta and "</think>" not in delta:
            return None
        fresh = self._parts[self._parts_seen:]
        self._parts_seen = len(self._parts)
        self._tail = (self._tail + "".join(fresh))[-self._window:]
        self._checked_at = self._length
        verdict = self._check()
        if verdict is not None and self.abort_on is not None and verdict.kind not in self.abort_on:
            return None
        return verdict

    def finish(self) -> Degenerate | None:
        """Check the complete text once more (the stream may end between checks)."""
        return find_degenerate(self.text, self.policy)

    def _check(self) -> Degenerate | None:
        offset = self._length - len(self._tail)
        since = max(0, self._marker_at - offset - _MARKER_OVERLAP)
        marker = _THINK_MARKER.search(self._tail, since)
        self._marker_at = self._length
        if marker is not None:
            return Degenerate("think_marker", offset + marker.start())
        verdict = _tail_verdict(self._tail, self.policy)
        if verdict is None:
            return None
        if verdict.clean_end == 0 and offset > 0:  # garbage fills the window: trace it back
            return _tail_verdict(self.text, self.policy)
        return Degenerate(verdict.kind, offset + verdict.clean_end, verdict.period)


_MARKER_OVERLAP = 64


def tail_window(policy: GuardPolicy) -> int:
    """Characters a check needs to see: the longest loop it must recognise, twice."""
    longest = policy.max_period * max(policy.min_markup_repeats, policy.min_loop_repeats)
    return 2 * max(longest, policy.min_loop_chars, _DIVERSITY_WINDOW) + policy.max_period


def _tail_verdict(text: str, policy: GuardPolicy) -> Degenerate | None:
    return _periodic_tail(text, policy) or _symbol_flood(text) or _low_diversity(text)
