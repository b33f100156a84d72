"""What every adapter says about a page, a document or an element; no framework.

Metadata values are flat (str, int, float, bool or None) so that every vector
store accepts them (Chroma, for one, rejects lists and dicts); the adapters only
choose each ecosystem's key names.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..document import PageErrorInfo, PageResult, ParsedDocument
from ..elements import Element, element_text, mark_running_furniture, parse_page_or_text
from ..elements.chunker import HeadingPath, enter_heading
from ..elements.markdown import PageGeometry
from . import metadata as keys

PAGE_SEPARATOR = "\f"
"""Joins page texts in one-document-per-file modes (a form feed, as PDF loaders use)."""


def error_text(error: PageErrorInfo | None) -> str | None:
    """``"PageTimeout: …"``, or None for a page that has content."""
    return None if error is None else f"{error.kind}: {error.message}"


def page_flags(page: PageResult) -> dict[str, Any]:
    """The OCR flags and the geometry of one page, as metadata."""
    return {keys.BLANK: page.blank, keys.LOOP_TRIMMED: page.loop_trimmed,
            keys.TRUNCATED: page.truncated, keys.OCR_ERROR: error_text(page.error),
            keys.PAGE_GEOMETRY: page_geometry(page)}


def document_flags(doc: ParsedDocument) -> dict[str, Any]:
    """The OCR flags of a whole file: any page's flag, and every error with its page;
    every page's geometry."""
    errors = [f"page {p.page_number}: {error_text(p.error)}" for p in doc.pages if p.error]
    if doc.error is not None:
        errors.insert(0, error_text(doc.error) or "")
    return {keys.BLANK: bool(doc.pages) and all(p.blank for p in doc.pages),
            keys.LOOP_TRIMMED: any(p.loop_trimmed for p in doc.pages),
            keys.TRUNCATED: any(p.truncated for p in doc.pages),
            keys.OCR_ERROR: "; ".join(errors) or None,
            keys.PAGE_GEOMETRY: ";".join(page_geometry(p) for p in doc.pages)}


def document_text(doc: ParsedDocument) -> str:
    """Every page's Markdown, joined with :data:`PAGE_SEPARATOR` (failed pages are empty)."""
    return PAGE_SEPARATOR.join(p.markdown.replace(PAGE_SEPARATOR, "\n") for p in doc.pages)


def bbox_text(bbox: tuple[int, int, int, int] | tuple[float, float, float, float] | None
              ) -> str | None:
    """A box as ``"left,top,right,bottom"``: flat, and readable in any store."""
    return None if bbox is None else ",".join(f"{v:g}" for v in bbox)


def element_content(element: Element) -> str:
    """The text an element contributes on its own (a heading without its ``#``)."""
    return element.text if element.kind == "heading" else element_text(element)


def figure_caption(elements: list[Element], figure: Element) -> str:
    """The figure's caption (right after it, else right before it), else its alt text."""
    position = next(i for i, e in enumerate(elements) if e is figure)
    for neighbour in (position + 1, position - 1):
        if 0 <= neighbour < len(elements) and elements[neighbour].kind == "caption":
            return elements[neighbour].text
    return figure.text


def figure_metadata(figure: Element) -> dict[str, Any]:
    """Where a figure is: page and box in the three frames (flat strings), crop file."""
    return {keys.PAGE_NUMBER: figure.page_number, keys.BBOX: bbox_text(figure.bbox),
            keys.PIXEL_BBOX: bbox_text(figure.pixel_bbox),
            keys.PDF_BBOX: bbox_text(figure.pdf_bbox), keys.IMAGE_PATH: figure.image_path}


def page_geometry(page: PageResult) -> str:
    """``"w,h"`` (page-image pixels), then ``",w_pt,h_pt"`` when the page has a size in
    points, then ``"@r"`` when it was turned ``r`` degrees before it was sent: what the
    elements need to rebuild their figure boxes from Markdown alone."""
    size = f"{page.width},{page.height}"
    if page.page_size_pt is not None:
        size += ",{:g},{:g}".format(*page.page_size_pt)
    return size + (f"@{page.rotation}" if page.rotation else "")


def read_page_geometry(text: object) -> PageGeometry:
    """The inverse of :func:`page_geometry`; zeros and None for what is missing or bad."""
    size, _, turn = str(text).partition("@")
    try:
        values = [float(v) for v in size.split(",")]
        rotation = int(turn) if turn else 0
    except ValueError:
        return PageGeometry()
    if len(values) not in (2, 4) or rotation not in (0, 90, 180, 270):
        return PageGeometry()
    points = (values[2], values[3]) if len(values) == 4 else None
    return PageGeometry(int(values[0]), int(values[1]), points, rotation)


def walk_elements(doc: ParsedDocument) -> Iterator[tuple[Element, list[str]]]:
    """Every element in reading order with its heading path (a heading includes itself)."""
    path: HeadingPath = []
    for page in doc.pages:
        for element in page.elements:
            if element.kind == "heading":
                enter_heading(path, element)
            yield element, [text for _, text in path]


def rebuild_pages(texts: list[tuple[int, str, str | None]]) -> list[PageResult]:
    """Pages with elements from ``(page_number, markdown, geometry)``, running furniture
    marked (``geometry`` as :func:`page_geometry` writes it, or None).

    Parsing is deterministic, so a node parser gets back the elements the reader saw
    from the Markdown and the page geometry alone, without storing elements in metadata.
    """
    pages = []
    for number, text, geometry in texts:
        g = read_page_geometry(geometry)
        pages.append(PageResult(
            page_number=number, markdown=text, width=g.width, height=g.height,
            page_size_pt=g.page_size_pt, rotation=g.rotation, elements=parse_page_or_text(
                text, number, width=g.width, height=g.height, page_size_pt=g.page_size_pt,
                rotation=g.rotation)))
    mark_running_furniture([p.elements for p in pages])
    return pages
