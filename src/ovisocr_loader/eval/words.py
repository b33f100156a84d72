"""Word-level precision, recall and F1: the field report's measure, in one place.

The rule (:func:`words`), applied alike to a model's output and to a reference:

1. Unicode NFKC, then case folding (``Straße`` and ``STRASSE`` are one word).
2. Markup removed: a layout-JSON page (dots.ocr's ``[{"bbox": ..., "category": ...,
   "text": ...}]``) is read as its cells' texts; YAML front matter opening the page
   (olmOCR's ``primary_language: en``...); HTML comments; grounding markers
   (``<|ref|>…<|/det|>``) with their labels and boxes; Nemotron Parse's artifact tokens
   (``<tbc>``, ``\\<|unk|\\>``); image references
   (``![alt](src)``, ``<img …>``) whole, for a transcription holds no figure names;
   other tags (``<td>``, ``<page_number>``, DocTags' ``<loc_12>`` and ``<_Python_>``:
   their text kept, entities decoded); a
   Markdown link ``[text](url)`` as its text; LaTeX control words
   (``\\frac``, ``\\mathrm``) with their arguments kept. Everything else that is not a
   word (heading ``#``, list markers, emphasis, table ``|`` borders and rules) is
   punctuation and never part of one.
3. A word is a run of letters and digits; one ``.``, ``,``, ``'``, ``’`` or ``-``
   between two such runs joins them (``1,234.56``, ``don't``, ``COVID-19`` are one
   word each); ``_`` separates. Han, kana and Hangul count one word per character.

Scores compare bags of words (a word matched as often as it appears in both):
precision = matched / output words, recall = matched / reference words, F1 their
harmonic mean. An empty side scores 1 for the other's measure, so an empty output
against a non-empty reference has F1 0, and two empty sides F1 1.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from ..elements.grounding import MARKER as GROUNDING_MARKER
from ..elements.html_document import DELETED
from ..elements.layout_json import read_layout_json
from ..elements.nemotron import ARTIFACTS as NEMOTRON_ARTIFACTS
from ..elements.normalise import FRONT_MATTER

_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_MD_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\)")
_IMG_TAG = re.compile(r"<img\b[^<>]*>", re.IGNORECASE)
_MD_LINK = re.compile(r"\[([^\]\n]*)\]\([^()\s]*\)")
#: <td>, <br/>, <page_number>; DocTags' <loc_12> and code language tokens (<_Python_>)
_TAG = re.compile(r"</?[a-zA-Z][^<>]*>|<_[^<>\s]+_>")
_LATEX_COMMAND = re.compile(r"\\[a-zA-Z]+")
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
                  "\U00020000-\U0002fa1f]")
_WORD = re.compile(r"[^\W_]+(?:[.,'’\-][^\W_]+)*")


def words(text: str) -> Counter[str]:
    """The bag of words of a page or document, by the rule above."""
    layout = read_layout_json(text)
    text = unicodedata.normalize("NFKC", layout.text.replace(DELETED, "") if layout else text)
    text = FRONT_MATTER.sub("", text).casefold()
    text = _COMMENT.sub(" ", text)
    text = GROUNDING_MARKER.sub(" ", NEMOTRON_ARTIFACTS.sub(" ", text))
    text = _IMG_TAG.sub(" ", _MD_IMAGE.sub(" ", text))
    text = _MD_LINK.sub(r" \1 ", text)
    text = html.unescape(_TAG.sub(" ", text))
    text = _LATEX_COMMAND.sub(" ", text)
    text = _CJK.sub(r" \g<0> ", text)
    return Counter(_WORD.findall(text))


@dataclass(frozen=True)
class Score:
    """Word precision, recall and F1 of one output against one reference."""

    precision: float
    recall: float
    f1: float
    matched: int
    output_words: int
    reference_words: int


def score(output: Counter[str], reference: Counter[str]) -> Score:
    """Bag-of-words scores of ``output`` against ``reference``."""
    matched = sum((output & reference).values())
    out_n, ref_n = sum(output.values()), sum(reference.values())
    precision = matched / out_n if out_n else 1.0
    recall = matched / ref_n if ref_n else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Score(precision, recall, f1, matched, out_n, ref_n)


def word_f1(output: str, reference: str) -> Score:
    """Scores of one text against another (the rule above on both)."""
    return score(words(output), words(reference))
