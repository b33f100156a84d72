"""Which paragraphs are figure or table captions.

A caption is a short block that starts with a figure/table label (``Figure 3``,
``Fig. 3``, ``Table 2``, ``图 3``, ``表 2``, in several languages, maybe in bold)
followed by ``:``, ``.``, ``|``, a dash, or a space and a title, and stands
right before or after a figure or table. A body sentence that merely starts with
those words ("Table 6 summarizes ...": a lowercase word after the number, or a
long block) stays a paragraph.
"""

from __future__ import annotations

import re

from .model import Element

_LABEL = re.compile(
    r"^\s*(?:\*\*|__|\*|_)?\s*"
    r"(?:fig(?:ure)?s?\.?|table|tab\.|abbildung|abb\.|tabelle|tableau|figura|tabla|tabela|"
    r"chart|exhibit|scheme|plate|图|表|圖)"
    r"\s*(?:[\dIVXivx]+(?:[.\-–][\dA-Za-z]+)*[a-z]?|[一二三四五六七八九十百]+)"
    r"(?:\*\*|__|\*|_)?(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL)
_SEPARATOR = re.compile(r"^\s*(?:[:：.．|｜\-–—]|\s{2,})")
_MAX_WITH_SEPARATOR = 1200
_MAX_WITH_SPACE = 600


def is_caption_text(text: str) -> bool:
    """Does this text read as a caption (label, then a separator or a title)?"""
    match = _LABEL.match(text)
    if match is None:
        return False
    rest = match.group("rest")
    if not rest.strip():
        return True
    if _SEPARATOR.match(rest):
        return len(text) <= _MAX_WITH_SEPARATOR
    first = rest.lstrip()[:1]
    if not rest[:1].isspace() and first.isascii() and first.isalpha():
        return False  # "Tables" or "Figure1a" run on into a word: not a label
    return not (first.isascii() and first.islower()) and len(text) <= _MAX_WITH_SPACE


def mark_captions(elements: list[Element]) -> None:
    """Turn caption paragraphs next to a figure or table into ``caption`` elements."""
    for i, element in enumerate(elements):
        if element.kind != "paragraph" or not is_caption_text(element.text):
            continue
        before = elements[i - 1].kind if i > 0 else None
        after = elements[i + 1].kind if i + 1 < len(elements) else None
        if before in ("figure", "table") or after in ("figure", "table"):
            element.kind = "caption"
