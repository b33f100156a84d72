"""Semantic tags some page parsers wrap around text (Nanonets-OCR's prompt asks for them).

``<page_number>14</page_number>`` and ``<watermark>OFFICIAL COPY</watermark>`` mark
text that is not the page's content: it becomes ``page_furniture`` (left out of
chunks like running headers). ``<signature>J. Smith</signature>`` marks content: it
stays text. Normalisation blanks every such tag (same length, so spans still index
the model's Markdown); the furniture is found again here by its span.
"""

from __future__ import annotations

import re

from .model import Element

TAG = re.compile(r"</?(?:page_number|watermark|signature)>", re.IGNORECASE)
_FURNITURE = re.compile(r"<(page_number|watermark)>(.{0,200}?)</\1>",
                        re.IGNORECASE | re.DOTALL)


def furniture_spans(text: str) -> list[tuple[int, int]]:
    """Where each page number or watermark stands, tags included."""
    return [match.span() for match in _FURNITURE.finditer(text)]


def mark_tagged_furniture(elements: list[Element], spans: list[tuple[int, int]]) -> None:
    """Text elements that hold nothing but a tagged page number or watermark are
    furniture (one inside a sentence stays part of it)."""
    for element in elements:
        if element.kind in ("paragraph", "heading", "list") and any(
                start <= element.span[0] and element.span[1] <= end for start, end in spans):
            element.kind = "page_furniture"
