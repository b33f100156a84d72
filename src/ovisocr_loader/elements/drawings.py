"""Figures written as markup instead of a reference: SVG drawings and description tags.

Some page parsers draw a chart as SVG (``<svg>...</svg>``, or its bare ``<g>`` and
``<path>`` fragments when the output was cut), or describe a picture in
``<description>...</description>`` (Nanonets-style, inside ``<img>`` or after it).
Either way the words in it (an SVG's ``<title>``, ``<desc>`` and ``<text>`` labels,
the description) describe a figure; the drawing commands (paths, coordinates, styles)
are no text and never reach a chunk. A description right after a figure that has no
words of its own describes that figure.
"""

from __future__ import annotations

import html
import re

#: what opens a drawing at a line start: an SVG root, an element only SVG has, or a
#: description tag (``<text>`` or ``<line>`` alone could open prose about a tag)
DRAWING_OPEN = re.compile(
    r"<(?P<name>svg|description|g|path|polyline|polygon|circle|ellipse|rect)\b[^<>]*>",
    re.IGNORECASE)
#: where each kind of drawing ends (fragments: at the end of their paragraph)
DRAWING_CLOSE = {"svg": "</svg>", "description": "</description>"}
_CODE = re.compile(r"<(style|script)\b[^<>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^<>]*>")


def drawing_close(opening: str) -> str | None:
    """The closing tag a drawing opened by ``opening`` runs to, or None for a fragment."""
    match = DRAWING_OPEN.match(opening)
    return DRAWING_CLOSE.get(match.group("name").lower()) if match else None


def drawing_words(source: str) -> str:
    """What a drawing says: the text between its tags (titles, labels, a description),
    in order; tags, with their coordinates and styles, and style sheets dropped."""
    return " ".join(html.unescape(_TAG.sub(" ", _CODE.sub(" ", source))).split())
