"""A paragraph that a page break cut mid-sentence, read whole again.

The paragraph at the bottom of a page runs on at the top of the next when it
stops without ending its sentence and the next page opens with a paragraph that
goes on with it: in lower case or with a number (``December`` / ``31, 2019``), or
after a word that cannot end a sentence (``an increase in`` / ``R&D expenses.``),
or as prose after prose (not after a short label). A word hyphenated over the
break (``conti-`` / ``nued``) is one word again.
"""

from __future__ import annotations

import re

#: a sentence end, perhaps inside quotes or brackets or before a footnote mark
_ENDS_SENTENCE = re.compile(r"[.!?:;。！？：；][\"'”’)\]]*(?:\s*(?:\^?\d{1,2}|\*+|†))?$")
_HYPHENATED = re.compile(r"[A-Za-z]-$")
#: words that do not end an English sentence: what follows them goes on with it
_RUNS_ON_AFTER = frozenset(
    "a an the and or nor but of in on at to for from by with as than that which who whose "
    "its their our his her your is are was were be been has have had into onto per via "
    "between among under over about including such".split())
#: fewer words than this at the bottom of a page and no sentence end: a label or a
#: title the model did not mark, not prose that runs on
_MIN_WORDS = 6


def runs_on(first: str, second: str) -> bool:
    """Does the paragraph ``first`` (the last on a page) go on in ``second`` (the
    first on the next)?"""
    first, second = first.strip(), second.strip()
    if not first or not second or _ENDS_SENTENCE.search(first):
        return False
    if second[0].islower() or second[0].isdigit() or _HYPHENATED.search(first):
        return True
    if first.split()[-1].lower() in _RUNS_ON_AFTER:
        return True
    return len(first.split()) >= _MIN_WORDS and _prose(second)


def join_paragraphs(first: str, second: str) -> str:
    """The paragraph whole: a word hyphenated over the break rejoined (``conti-`` and
    ``nued``; ``Franco-`` and ``German`` keep their hyphen)."""
    first, second = first.strip(), second.strip()
    if not _HYPHENATED.search(first):
        return f"{first} {second}"
    return first[:-1] + second if second[:1].islower() else first + second


def _prose(text: str) -> bool:
    """Text that reads as running prose, not a heading: several words, a sentence end."""
    return len(text.split()) >= _MIN_WORDS and bool(re.search(r"[.!?。！？]", text))
