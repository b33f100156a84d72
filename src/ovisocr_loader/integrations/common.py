"""What every adapter says about a page, a document or an element; no framework.

Metadata values are flat (str, int, float, bool or None) so that every vector
store accepts them (Chroma, for one, rejects lists and dicts); the adapters only
choose each ecosystem's key names.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..document import PageErrorInfo, PageResult, ParsedDocument
from ..elements import Element, element_text, mark_running_furniture, parse_page
from ..elements.chunker import HeadingPath, enter_heading

PAGE_SEPARATOR = "\f"
"""Joins page texts in one-document-per-file modes (a form feed, as PDF loaders use)."""


def error_text(error: PageErrorInfo | None) -> str | None:
    """``"PageTimeoutError: …"``, or None for a page that has content."""
    return None if error is None else f"{error.kind}: {error.message}"


def page_flags(page: PageResult) -> dict[str, Any]:
    """The OCR flags of one page, as metadata."""
    return {"blank": page.blank, "loop_trimmed": page.loop_trimmed,
            "truncated": page.truncated, "ocr_error": error_text(page.error)}


def document_flags(doc: ParsedDocument) -> dict[str, Any]:
    """The OCR flags of a whole file: any page's flag, and every error with its page."""
    errors = [f"page {p.page_number}: {error_text(p.error)}" for p in doc.pages if p.error]
    if doc.error is not None:
        errors.insert(0, error_text(doc.error) or "")
    return {"blank": bool(doc.pages) and all(p.blank for p in doc.pages),
            "loop_trimmed": any(p.loop_trimmed for p in doc.pages),
            "truncated": any(p.truncated for p in doc.pages),
            "ocr_error": "; ".join(errors) or None}


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
    """The caption right after a figure, or an empty string."""
    position = next(i for i, e in enumerate(elements) if e is figure)
    after = elements[position + 1] if position + 1 < len(elements) else None
    return after.text if after is not None and after.kind == "caption" else ""


def walk_elements(doc: ParsedDocument) -> Iterator[tuple[Element, list[str]]]:
    """Every element in reading order with its heading path (a heading includes itself)."""
    path: HeadingPath = []
    for page in doc.pages:
        for element in page.elements:
            if element.kind == "heading":
                enter_heading(path, element)
            yield element, [text for _, text in path]


def rebuild_pages(texts: list[tuple[int, str]]) -> list[PageResult]:
    """Pages with elements from ``(page_number, markdown)`` pairs, running furniture marked.

    Parsing is deterministic, so a node parser gets back the elements the reader saw
    from the Markdown alone, without storing elements in document metadata.
    """
    pages = [PageResult(page_number=number, markdown=text, elements=parse_page(text, number))
             for number, text in texts]
    mark_running_furniture([p.elements for p in pages])
    return pages
