"""Grounding markers (DeepSeek-OCR's grounding mode) as element kinds and boxes.

Such output puts ``<|ref|>LABEL<|/ref|><|det|>[[x0, y0, x1, y1], ...]<|/det|>`` before
each block, boxes in the 0-999 frame of the page image (Unlimited-OCR writes the same
labels and boxes as ``<|det|>LABEL [x0, y0, x1, y1]<|/det|>``). Normalisation blanks the
markers (same length, so spans still index the model's Markdown); here each marker
gives the element that follows it, before the next marker, its kind (``title`` a
heading, ``sub_title`` a level-2 heading, ``*caption`` a caption, ``equation`` a
formula) and its box. An ``image`` marker with no element of its own becomes one
figure per box.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .figures import Box, valid_box
from .model import Element

MARKER = re.compile(r"<\|ref\|>(?P<label>[^<>]{0,80}?)<\|/ref\|>[ \t]*"
                    r"<\|det\|>(?P<boxes>[^<>]{0,2000}?)<\|/det\|>"
                    # Unlimited-OCR's shape: ``<|det|>label [x0, y0, x1, y1]<|/det|>``
                    r"|<\|det\|>[ \t]*(?P<bare_label>[a-z_]{1,40})[ \t]*"
                    r"(?P<bare_box>\[\s*\d{1,6}(?:\s*,\s*\d{1,6}){3}\s*\])[ \t]*<\|/det\|>")
_NUMBERS = re.compile(r"\[\s*(\d{1,6})\s*,\s*(\d{1,6})\s*,\s*(\d{1,6})\s*,\s*(\d{1,6})\s*\]")
_HEADINGS = {"title": 1, "sub_title": 2, "subtitle": 2, "section_title": 2, "section-header": 2,
             **{f"h{level}": level for level in range(1, 7)}}
_FIGURES = {"image", "figure", "chart", "picture", "diagram"}
_FORMULAS = {"equation", "formula", "equation-block"}
#: labels of the page's furniture (running headers and footers)
FURNITURE = {"header", "footer", "page_header", "page_footer", "page-header", "page-footer"}

#: builds a figure element with its boxes in every frame from a box in the model frame
FigureFactory = Callable[[Box, tuple[int, int]], Element]


@dataclass(frozen=True)
class Marker:
    start: int
    end: int
    label: str
    boxes: list[Box]
    #: where the marked block ends, when known (an HTML block's closing tag)
    limit: int | None = None


def read_markers(text: str) -> list[Marker]:
    """Every grounding marker of a page, in order (boxes clamped to the 0-999 frame)."""
    markers = []
    for match in MARKER.finditer(text):
        bare = match.group("label") is None
        boxes: list[Box] = []
        for numbers in _NUMBERS.findall(match.group("bare_box" if bare else "boxes")):
            left, top, right, bottom = (min(999, int(n)) for n in numbers)
            if valid_box((left, top, right, bottom)):
                boxes.append((left, top, right, bottom))
        label = match.group("bare_label" if bare else "label").strip().lower()
        markers.append(Marker(match.start(), match.end(), label, boxes))
    return markers


def apply_markers(elements: list[Element], markers: list[Marker], figure: FigureFactory
                  ) -> list[Element]:
    """The elements with each marker's kind and box applied (figures added for image
    markers that head no element)."""
    out = list(elements)
    for position, marker in enumerate(markers):
        stop = _window_end(markers, position)
        target = next((e for e in out if e.span[0] >= marker.end
                       and (stop is None or e.span[0] < stop)), None)
        if marker.label in _FIGURES and (target is None or target.kind != "figure"):
            figures = [figure(box, (marker.start, marker.end)) for box in marker.boxes]
            at = next((i for i, e in enumerate(out) if e.span[0] > marker.start), len(out))
            out[at:at] = figures
            continue
        if target is not None:
            _ground(target, marker, figure)
    return out


def _window_end(markers: list[Marker], position: int) -> int | None:
    """Where the block a marker heads must start by: the next marker or its own end."""
    ends = [markers[position + 1].start] if position + 1 < len(markers) else []
    limit = markers[position].limit
    return min([*ends, limit] if limit is not None else ends, default=None)


def _ground(element: Element, marker: Marker, figure: FigureFactory) -> None:
    if marker.boxes:
        box = _union(marker.boxes)
        placed = figure(box, element.span)
        element.bbox, element.pixel_bbox, element.pdf_bbox = (
            placed.bbox, placed.pixel_bbox, placed.pdf_bbox)
    if element.kind not in ("paragraph", "heading"):
        return
    if marker.label in _HEADINGS:
        element.kind, element.level = "heading", _HEADINGS[marker.label]
    elif marker.label.endswith("caption"):
        element.kind = "caption"
    elif marker.label in _FORMULAS and element.kind == "paragraph":
        element.kind, element.latex = "formula", element.text
    elif marker.label in FURNITURE:
        element.kind = "page_furniture"


def _union(boxes: list[Box]) -> Box:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes),
            max(b[2] for b in boxes), max(b[3] for b in boxes))
