"""Running headers and footers: the lines a report repeats at the edge of its pages.

A page alone cannot tell its running header ("Annual Report 2019 | 14") from a
title; a file can: the same line, numbers aside, at the top or bottom of most pages.
Such lines are marked ``page_furniture``: kept in the elements, out of chunk text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..elements.model import Element

_MAX_CHARS = 150
_DIGITS = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")


def running_key(text: str) -> str:
    """What repeats of a running line: its text with any number standing for all."""
    return _SPACES.sub(" ", _DIGITS.sub("#", text.lower())).strip()


def mark_running_furniture(pages: Sequence[list[Element]], *, min_share: float = 0.5,
                           min_pages: int = 2) -> None:
    """Mark as furniture the lines at a page's top or bottom repeated (numbers varying)
    at the edges of at least ``min_share`` of the pages, and of ``min_pages``."""
    if len(pages) < min_pages:
        return
    counts: dict[str, int] = {}
    seen: list[list[tuple[Element, str]]] = []
    for elements in pages:
        keyed = _edge_lines(elements)
        seen.append(keyed)
        for key in {key for _, key in keyed}:
            counts[key] = counts.get(key, 0) + 1
    needed = max(min_pages, int(len(pages) * min_share + 0.999))
    for keyed in seen:
        for element, key in keyed:
            if counts[key] >= needed:
                element.kind = "page_furniture"


def _edge_lines(elements: list[Element]) -> list[tuple[Element, str]]:
    """The first and last element of a page, when short text, keyed by
    :func:`running_key`. A page number already marked does not take the edge (a header
    line may stand under it), unless that would leave a page of one or two elements
    nothing but its edges (the paragraph beside a page number is body text there)."""
    content = [e for e in elements if e.kind != "page_furniture"]
    edges = [*content[:1], *content[-1:]] if len(content) >= 3 else [*elements[:1],
                                                                    *elements[-1:]]
    keyed = {id(e): (e, running_key(e.text)) for e in edges
             if e.kind in ("paragraph", "heading") and 0 < len(e.text) <= _MAX_CHARS}
    return list(keyed.values())
