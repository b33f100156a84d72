"""A page in Nemotron Parse's own format (NVIDIA), read as the same elements as Markdown.

Asked for boxes, classes and Markdown (``<predict_bbox><predict_classes>
<output_markdown>``), Nemotron Parse writes each block as ``<x_0.1><y_0.05>BODY<x_0.9>
<y_0.08><class_Title>``: two corners around a Markdown body (a LaTeX ``tabular`` for a
``Table``, a ``<chart type="...">`` with Markdown tables for a ``Chart``), then the
block's class (the format as docling's parsers for Nemotron Parse 2.0 and 3.5 read it).
Like :mod:`.html_document` this is a same-length rewrite, so spans still index the page
as the model wrote it:

- coordinate and class tokens are blanked, with a blank line before each block so it is
  a block of its own; the model's artifact tokens (``<tbc>``, ``\\<|unk|\\>``) are
  deleted, and so is a chart's ``<chart type="...">`` line;
- each block's class becomes a :class:`~.grounding.Marker`: ``Title`` a level-1 heading,
  ``Section-header`` a heading (as deep as its ``#`` marks, else level 2), ``Caption``,
  ``Formula``, ``Page-header``/``Page-footer`` page furniture.

Boxes are not read: Nemotron Parse 2.0 writes them on a padded 1664x2048 canvas and 3.5
on the page image, and nothing on the page says which of them wrote it.
"""

from __future__ import annotations

import re

from .grounding import Marker
from .html_document import DELETED, HtmlDocument, overwrite

_COORDINATES = re.compile(r"<x_\d{1,4}(?:\.\d{1,8})?><y_\d{1,4}(?:\.\d{1,8})?>")
_CLASS = re.compile(r"<class_(?P<name>[A-Za-z][\w-]{0,40})>")
#: what the model writes for what it cannot read (docling drops them too)
ARTIFACTS = re.compile(r"<tbc>|\\<\|unk\|\\>|\\unknown\b")
_CHART = re.compile(r"<chart\b[^<>\n]*>|</chart>")
_DEPTH = re.compile(r"\s*(#{1,6})\s")
_LABELS = {"title": "title", "caption": "caption", "formula": "formula",
           "page-header": "page-header", "page-footer": "page-footer"}


def is_nemotron_page(text: str) -> bool:
    """A page of Nemotron Parse blocks: corner coordinates and a class token."""
    return bool(_COORDINATES.search(text) and _CLASS.search(text))


def read_nemotron(text: str, sent_size: tuple[int, int] = (0, 0)) -> HtmlDocument | None:
    """The rewrite of a Nemotron Parse page, or None for any other page (``sent_size``
    is not needed: boxes are not read)."""
    if not is_nemotron_page(text):
        return None
    chars = list(text)
    markers: list[Marker] = []
    start, previous = 0, ""
    for token in [*_CLASS.finditer(text), None]:
        end = token.start() if token else len(text)
        name = token.group("name").lower() if token else ""
        corners = list(_COORDINATES.finditer(text, start, end))
        for corner in corners:
            overwrite(chars, corner.start(), corner.end(), "")
        if corners:   # the body starts a line after a blank one (list items: one list)
            breaks = "\n" if name == previous == "list-item" else "\n\n"
            chars[corners[0].end() - len(breaks):corners[0].end()] = breaks
        if token is not None:
            overwrite(chars, token.start(), token.end(), "")
            if corners:
                markers.append(Marker(corners[0].start(), corners[0].end(),
                                      _label(name, text[corners[0].end():end]),
                                      [], limit=end))
            start, previous = token.end(), name
    for artifact in (*ARTIFACTS.finditer(text), *_CHART.finditer(text)):
        overwrite(chars, artifact.start(), artifact.end(), "", DELETED)
    return HtmlDocument("".join(chars), markers)


def _label(name: str, body: str) -> str:
    if name == "section-header":
        depth = _DEPTH.match(body)
        return f"h{len(depth.group(1)) if depth else 2}"
    return _LABELS.get(name, "text")

