"""Page Markdown into ordered, typed elements (pure).

The page is normalised (fences around Markdown, wrapper markup; see
:mod:`.normalise`), split into blocks (:mod:`.blocks`), and each block becomes
one or more elements. Every non-blank piece of text ends up in exactly one
element, so no text is lost; markup becomes structure (tables, figures,
formulas). Stray ``<think>`` markers never reach an element. Spans index the
page Markdown as the model wrote it.
"""

from __future__ import annotations

import html
import logging
import re
from dataclasses import dataclass

from .blocks import HEADING, Block, split_blocks
from .captions import mark_captions
from .doctags import read_doctags
from .drawings import drawing_words
from .figures import (
    IMAGE_REF,
    ImageRef,
    clamp_pixels,
    pixels_to_points,
    read_image_ref,
    to_model_frame,
    to_pixels,
    to_points,
    unturn,
)
from .formulas import split_formula
from .grounding import apply_markers, read_markers
from .html_document import DELETED, read_html_document
from .latex_tables import parse_latex_table
from .layout_json import read_layout_json
from .model import Element, ElementKind, TableData
from .nemotron import read_nemotron
from .normalise import normalise_page
from .otsl import parse_otsl
from .semantic_tags import furniture_spans, mark_tagged_furniture
from .tables import SCRIPT_MARKS, CaptionedTable, parse_pipe_table, parse_table

log = logging.getLogger("ovisocr_loader")

_PAGE_NUMBER = re.compile(
    r"^(?:(?:page|p\.|seite|página|pagina)\s*)?[-–—]?\s*\d{1,4}\s*[-–—]?"
    r"(?:\s*(?:of|/|von|de)\s*\d{1,4})?$", re.IGNORECASE)
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
#: a superscript or subscript in prose (MinerU writes footnote marks and affiliations
#: so), read as in a table cell: ``^1``, ``_2``
_SCRIPT = re.compile(r"<(sup|sub)(?:\s[^<>]*)?>([^<>\n]*)</\1\s*>", re.IGNORECASE)
#: inline tags that only style their text: dropped, the text kept
_STYLE_TAG = re.compile(r"</?(?:b|i|u|em|strong|span)(?:\s[^<>]*)?>", re.IGNORECASE)
_INNER_SPACES = re.compile(r"(?<=\S)[ \t]{2,}")
#: a character reference as HTML and CommonMark write it: named, decimal or hex, with
#: its semicolon
_REFERENCE = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});")
_FURNITURE_SLOTS = 2
#: readers of pages that are not Markdown (each a same-length rewrite, or None)
_DOCUMENT_READERS = (read_html_document, read_layout_json, read_doctags, read_nemotron)
#: a link standing for a table kept in a file of its own: ``[tbl-0.html](tbl-0.html)``
TABLE_PLACEHOLDER = re.compile(
    r"\[(?P<name>(?:tbl|table)[-_]?\d+\.(?:html?|md|csv))\]\((?P<src>[^()\s]*\1)\)",
    re.IGNORECASE)


@dataclass(frozen=True)
class PageGeometry:
    """What maps a figure box to pixels and points (zeros/None when unknown): the page
    as stored, and how far it was turned clockwise before it was sent."""

    width: int = 0
    height: int = 0
    page_size_pt: tuple[float, float] | None = None
    rotation: int = 0

    @property
    def sent_size(self) -> tuple[int, int]:
        """The image as sent to the model (the stored page, turned)."""
        turned = self.rotation in (90, 270)
        return (self.height, self.width) if turned else (self.width, self.height)


def parse_page(markdown: str, page_number: int, *, width: int = 0, height: int = 0,
               page_size_pt: tuple[float, float] | None = None, rotation: int = 0
               ) -> list[Element]:
    """Split one page's Markdown into elements in reading order.

    ``width``/``height``/``page_size_pt`` describe the page as stored; with a
    ``rotation`` the image sent was turned that far clockwise, and figure boxes
    (in the sent image's frame) are mapped back onto the stored page.
    """
    geometry = PageGeometry(width, height, page_size_pt, rotation)
    document = next(filter(None, (read(markdown, geometry.sent_size)
                                  for read in _DOCUMENT_READERS)), None)
    # tables are parsed from the HTML as written (in a JSON page: its strings decoded)
    written = document.text if document else markdown
    text = normalise_page(written)
    elements: list[Element] = []
    for block in split_blocks(text):
        found = _elements(block, written, text, page_number, geometry)
        if not (block.kind == "drawing" and _describes(elements, found[0])):
            elements.extend(found)
    markers = sorted(read_markers(markdown) + (document.markers if document else []),
                     key=lambda marker: marker.start)
    if document:
        _drop_deleted(elements)
    if markers:
        elements = apply_markers(elements, markers, lambda box, span: _figure(
            ImageRef(src=None, alt="", model_box=box), span, page_number, geometry))
    for index, element in enumerate(elements):
        element.index = index
    mark_captions(elements)
    _mark_page_numbers(elements)
    mark_tagged_furniture(elements, furniture_spans(markdown))
    return elements


def parse_page_or_text(markdown: str, page_number: int, *, width: int = 0, height: int = 0,
                       page_size_pt: tuple[float, float] | None = None, rotation: int = 0,
                       name: str = "") -> list[Element]:
    """:func:`parse_page`, but a parser failure costs the page its structure, never its
    text: the whole page becomes one paragraph (and a warning names the page)."""
    try:
        return parse_page(markdown, page_number, width=width, height=height,
                          page_size_pt=page_size_pt, rotation=rotation)
    except Exception as exc:  # one page's Markdown must never stop a batch
        log.warning("%s page %d: the Markdown could not be parsed into elements (%s: %s); "
                    "kept as one paragraph", name or "<input>", page_number,
                    type(exc).__name__, exc)
        text = markdown.strip()
        return [Element(kind="paragraph", text=text, page_number=page_number, index=0,
                        span=(0, len(markdown)))] if text else []


def _elements(block: Block, original: str, text: str, page: int, geometry: PageGeometry
              ) -> list[Element]:
    span = (block.start, block.end)
    source = text[block.start:block.end]
    if block.kind == "table":
        table = parse_table(original[block.start:block.end].replace(DELETED, ""))
        return [Element(kind="table", text=table.to_text(), page_number=page, index=0,
                        span=span, table=table)]
    if block.kind == "latex_table":
        return _captioned_table(parse_latex_table(source), block.start, len(source), page)
    if block.kind == "otsl_table":
        return _captioned_table(parse_otsl(source), block.start, len(source), page)
    if block.kind == "pipe_table":
        table = parse_pipe_table(source)
        return [Element(kind="table", text=table.to_text(), page_number=page, index=0,
                        span=span, table=table)]
    if block.kind == "formula":
        latex, number = split_formula(source)
        return [Element(kind="formula", text=source.strip(), latex=latex,
                        equation_number=number, page_number=page, index=0, span=span)]
    if block.kind == "code":
        return [Element(kind="code", text=_code_text(source), page_number=page, index=0,
                        span=span)]
    if block.kind == "heading":
        return _heading(source, block.start, page, geometry)
    if block.kind == "drawing":
        return [_figure(ImageRef(src=None, alt=drawing_words(source)), span, page, geometry)]
    placeholder = TABLE_PLACEHOLDER.fullmatch(source.strip())
    if placeholder is not None:  # the table lives in its own file (Mistral OCR)
        return [Element(kind="table", text="", page_number=page, index=0, span=span,
                        table=TableData(rows=[], html=""), src=placeholder.group("src"))]
    kind: ElementKind = "list" if block.kind == "list" else "paragraph"
    return _with_figures(kind, source, block.start, page, geometry)


def _describes(elements: list[Element], drawing: Element) -> bool:
    """A drawing right after a figure with no words of its own is that figure's
    description (``<img src=...>`` then ``<description>...</description>``): it
    becomes the figure's text and its span runs over both."""
    figure = elements[-1] if elements else None
    if figure is None or figure.kind != "figure" or figure.text:
        return False
    figure.text = drawing.text
    figure.span = (figure.span[0], drawing.span[1])
    return True


def _captioned_table(parsed: CaptionedTable, start: int, length: int, page: int
                     ) -> list[Element]:
    """A table written with its caption (a LaTeX float, DocTags), and the caption as a
    caption where it stands."""
    table = Element(kind="table", text=parsed.table.to_text(), page_number=page, index=0,
                    span=(start, start + length), table=parsed.table)
    if parsed.caption is None:
        return [table]
    at = parsed.caption.span
    caption = Element(kind="caption", text=parsed.caption.text, page_number=page, index=0,
                      span=(start + at[0], start + at[1]))
    return [caption, table] if at[0] < parsed.cells_at else [table, caption]


def _drop_deleted(elements: list[Element]) -> None:
    """Element text never holds what a rewrite deleted (formulas and code keep their
    source as written, so they may)."""
    for element in elements:
        element.text = element.text.replace(DELETED, "")
        if element.latex:
            element.latex = element.latex.replace(DELETED, "")


def _code_text(source: str) -> str:
    lines = source.strip().split("\n")
    closing = lines[-1].strip() if len(lines) > 1 else ""
    closed = closing[:3] in ("```", "~~~")
    body = lines[1:-1] if closed else lines[1:]
    # text after the closing fence ("```(1)") is kept, not dropped with it
    rest = closing.lstrip(closing[0]).strip() if closed else ""
    info = lines[0].strip()[3:].strip()
    # in a closed fence around code a one-word info string is the language; otherwise
    # (an open or empty fence) it is text
    language = closed and any(line.strip() for line in body) and re.fullmatch(
        r"[\w+#.-]*", info)
    head = [] if language else [info]
    return "\n".join([*head, *body, *([rest] if rest else [])]).strip("\n")


def clean_text(source: str, *, indented: bool = False) -> str:
    """Prose as it reads: ``<br>`` as a line break, ``<sup>1</sup>`` as ``^1`` and
    ``<sub>2</sub>`` as ``_2`` (as in table cells), styling tags (``<b>``, ``<i>``, ...)
    dropped for their text, character references decoded
    (``&amp;`` as ``&``, as CommonMark reads them; only with their ``;``, so that
    ``&copy 3`` stays), gaps left by blanked markup closed (at the start of a line too,
    unless ``indented``: a list's nesting)."""
    text = _BREAK.sub("\n", source.replace(DELETED, ""))
    if "<" in text:
        text = _STYLE_TAG.sub("", _SCRIPT.sub(_script_mark, text))
    lines = _REFERENCE.sub(lambda ref: html.unescape(ref.group()), text).split("\n")
    return "\n".join(_INNER_SPACES.sub(" ", line.rstrip() if indented else line.strip())
                     for line in lines).strip()


def _script_mark(match: re.Match[str]) -> str:
    return SCRIPT_MARKS[match.group(1).lower()] + match.group(2)


def _heading(source: str, start: int, page: int, geometry: PageGeometry) -> list[Element]:
    """A heading (``#`` or setext), with any image reference on its line as a figure
    after it."""
    match = HEADING.match(source.strip())
    if match is not None:
        title, level = match.group(2), len(match.group(1))
    else:  # setext: the text over its underline
        *lines, underline = source.rstrip().split("\n")
        title, level = " ".join(line.strip() for line in lines), (
            1 if underline.strip().startswith("=") else 2)
    figures = [e for e in _with_figures("paragraph", source, start, page, geometry)
               if e.kind == "figure"]
    text = clean_text(IMAGE_REF.sub(" ", title))
    if not text:
        return figures
    heading = Element(kind="heading", text=text, level=level, page_number=page,
                      index=0, span=(start, start + len(source.rstrip())))
    return [heading, *figures]


def _with_figures(kind: ElementKind, source: str, start: int, page: int,
                  geometry: PageGeometry) -> list[Element]:
    """Text and figures of a prose block: every image reference becomes a figure."""
    out: list[Element] = []
    last = 0
    for match in IMAGE_REF.finditer(source):
        _add_text(out, kind, source, start, last, match.start(), page)
        out.append(_figure(read_image_ref(match), (start + match.start(), start + match.end()),
                           page, geometry))
        last = match.end()
    _add_text(out, kind, source, start, last, len(source), page)
    return out


def _add_text(out: list[Element], kind: ElementKind, source: str, start: int, begin: int,
              end: int, page: int) -> None:
    text = clean_text(source[begin:end], indented=kind == "list")
    if text:
        offset = begin + len(source[begin:end]) - len(source[begin:end].lstrip())
        out.append(Element(kind=kind, text=text, page_number=page, index=0,
                           span=(start + offset, start + len(source[:end].rstrip()))))


def _figure(ref: ImageRef, span: tuple[int, int], page: int, geometry: PageGeometry
            ) -> Element:
    if geometry.rotation:
        return _turned_figure(ref, span, page, geometry)
    width, height, points = geometry.width, geometry.height, geometry.page_size_pt
    bbox, pixel_bbox, pdf_bbox = ref.model_box, None, None
    if ref.model_box is not None:
        pixel_bbox = to_pixels(ref.model_box, width, height) if width and height else None
        pdf_bbox = to_points(ref.model_box, points) if points else None
    elif ref.pixel_box is not None:
        known = bool(width and height)
        pixel_bbox = clamp_pixels(ref.pixel_box, width, height) if known else ref.pixel_box
        bbox = to_model_frame(ref.pixel_box, width, height) if known else None
        pdf_bbox = pixels_to_points(ref.pixel_box, width, height, points) if (
            known and points) else None
    return Element(kind="figure", text=ref.alt, page_number=page, index=0, span=span,
                   bbox=bbox, pixel_bbox=pixel_bbox, pdf_bbox=pdf_bbox, src=ref.src)


def _turned_figure(ref: ImageRef, span: tuple[int, int], page: int, geometry: PageGeometry
                   ) -> Element:
    """A figure of a page sent turned: ``bbox`` stays in the frame of the image sent
    (what the model saw); pixel and point boxes are on the page as stored."""
    width, height, points = geometry.width, geometry.height, geometry.page_size_pt
    sent_w, sent_h = geometry.sent_size
    bbox = ref.model_box
    if bbox is None and ref.pixel_box is not None and width and height:
        bbox = to_model_frame(ref.pixel_box, sent_w, sent_h)
    stored = unturn(bbox, geometry.rotation) if bbox is not None else None
    pixel_bbox = to_pixels(stored, width, height) if stored and width and height else None
    pdf_bbox = to_points(stored, points) if stored and points else None
    return Element(kind="figure", text=ref.alt, page_number=page, index=0, span=span,
                   bbox=bbox, pixel_bbox=pixel_bbox, pdf_bbox=pdf_bbox, src=ref.src)


def _mark_page_numbers(elements: list[Element]) -> None:
    """Standalone page numbers near the top or bottom of the page are furniture."""
    slots = {*range(min(_FURNITURE_SLOTS, len(elements))),
             *range(max(0, len(elements) - _FURNITURE_SLOTS), len(elements))}
    for i in slots:
        element = elements[i]
        if element.kind in ("paragraph", "heading", "list") and \
                _PAGE_NUMBER.match(html.unescape(element.text).strip("*_ ")):
            element.kind = "page_furniture"
