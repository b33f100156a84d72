"""What every adapter says about a page, a document or an element; no framework.

Metadata values are flat (str, int, float, bool or None) so that every vector
store accepts them (Chroma, for one, rejects lists and dicts); the adapters only
choose each ecosystem's key names.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

from ..chunking import element_text
from ..chunking.chunker import HeadingPath, enter_heading
from ..document import PageResult, ParsedDocument, renumbered
from ..elements import Element, parse_page_or_text
from . import metadata as keys

log = logging.getLogger("ovisocr_loader")

PAGE_SEPARATOR = "\f"
"""Joins page texts in one-document-per-file modes (a form feed, as PDF loaders use)."""


class LastGood(Protocol):
    """What remembers good pages (an :class:`~ovisocr_loader.OvisParser`)."""

    def last_good(self, source: str, page_number: int) -> PageResult | None: ...


def document_key(parsed: ParsedDocument) -> str:
    """What a file's ids are made from: the path it was read from, as given (as
    LlamaIndex's ``filename_as_id`` does), so a copy or a renamed file is indexed under
    its own name and an edit keeps the ids; the content hash for bytes and streams."""
    if parsed.source and not parsed.source.startswith("<"):
        return parsed.source
    return parsed.sha256 or parsed.source


def text_digest(text: str) -> str:
    """A short content hash, for ids made from a chunk's place and text."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def content_hash(text: str, metadata: Mapping[str, Any]) -> str:
    """The SHA-256 of a Document's text and metadata: what a sync tool compares."""
    identity = text + "\n" + json.dumps(dict(metadata), sort_keys=True, default=str)
    return hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()


def keep_last_good(parsed: ParsedDocument, memory: LastGood) -> ParsedDocument:
    """``parsed`` with each failed page replaced by the last good read of that page the
    cache holds (said in a warning): a page that fails on a re-sync leaves an index as
    it was, rather than emptying that page. Pages never read well stay failed."""
    pages = []
    for page in parsed.pages:
        if page.error is not None:
            earlier = memory.last_good(parsed.source, page.page_number)
            if earlier is not None:
                log.warning("%s page %d failed (%s); its last good read stands in for it",
                            parsed.source, page.page_number, page.error.text)
                page = renumbered(earlier, page.page_number)
        pages.append(page)
    return parsed.model_copy(update={"pages": pages})


def _flag_metadata(flags: Sequence[str], error: str | None) -> dict[str, Any]:
    return {keys.BLANK: "blank" in flags, keys.LOOP_TRIMMED: "loop_trimmed" in flags,
            keys.TRUNCATED: "truncated" in flags, keys.OCR_ERROR: error}


def page_metadata(page: PageResult) -> dict[str, Any]:
    """The flags and the geometry of one page, as metadata."""
    points = page.page_size_pt or (None, None)
    return {**_flag_metadata(page.flags, page.error.text if page.error else None),
            keys.PAGE_WIDTH: page.width, keys.PAGE_HEIGHT: page.height,
            keys.PAGE_WIDTH_PT: points[0], keys.PAGE_HEIGHT_PT: points[1],
            keys.ROTATION: page.rotation}


def document_metadata(doc: ParsedDocument) -> dict[str, Any]:
    """The flags of a whole file: any page's flag, and every error with its page."""
    return _flag_metadata(doc.flags, doc.error_text)


def document_text(pages: list[PageResult]) -> str:
    """Every page's Markdown, joined with :data:`PAGE_SEPARATOR` (failed pages are empty)."""
    return PAGE_SEPARATOR.join(p.markdown.replace(PAGE_SEPARATOR, "\n") for p in pages)


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


def walk_elements(doc: ParsedDocument) -> Iterator[tuple[Element, list[str]]]:
    """Every element in reading order with its heading path (a heading includes itself)."""
    path: HeadingPath = []
    for page in doc.pages:
        for element in page.elements:
            if element.kind == "heading":
                enter_heading(path, element)
            yield element, [text for _, text in path]


def page_from_text(page_number: int, text: str, metadata: Mapping[str, Any]) -> PageResult:
    """A page with elements from Markdown that did not come with its elements (a
    Document from another loader, or one that went through JSON), its geometry read
    from :func:`page_metadata`'s keys when they are there."""
    width = int(metadata.get(keys.PAGE_WIDTH) or 0)
    height = int(metadata.get(keys.PAGE_HEIGHT) or 0)
    w_pt, h_pt = metadata.get(keys.PAGE_WIDTH_PT), metadata.get(keys.PAGE_HEIGHT_PT)
    points = (float(w_pt), float(h_pt)) if w_pt and h_pt else None
    rotation = int(metadata.get(keys.ROTATION) or 0)
    if rotation not in (0, 90, 180, 270):
        rotation = 0
    return PageResult(page_number=page_number, markdown=text, width=width, height=height,
                      page_size_pt=points, rotation=rotation,
                      elements=parse_page_or_text(text, page_number, width=width, height=height,
                                                  page_size_pt=points, rotation=rotation))

