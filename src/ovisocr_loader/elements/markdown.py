"""Page Markdown from OvisOCR2 into ordered, typed elements (pure).

Every non-blank line of the page ends up in exactly one element, so no text is
lost; markup becomes structure (tables, figures, formulas). Stray ``<think>``
markers never reach an element.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from .figures import FIGURE_TAG, to_pixels, to_points, valid_box
from .model import Element, ElementKind
from .tables import parse_table

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+•]|\d{1,3}[.)])[ \t]+\S")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_THINK = re.compile(r"^[ \t]*</?think>[ \t]*$")
_EQ_NUMBER = re.compile(r"^[ \t]*\(([\w.\-]{1,12})\)[ \t]*$")
_CAPTION = re.compile(
    r"^\s*(?:\*\*|_)?(?:fig(?:ure)?|figs?\.|table|tab\.|abbildung|abb\.|tabelle|tableau|"
    r"figura|tabla|tabela|图|表)\s*[\dIVXivx一二三四五六七八九十]",
    re.IGNORECASE)
_PAGE_NUMBER = re.compile(
    r"^(?:(?:page|p\.|seite|página|pagina)\s*)?[-–—]?\s*\d{1,4}\s*[-–—]?"
    r"(?:\s*(?:of|/|von|de)\s*\d{1,4})?$", re.IGNORECASE)
_FURNITURE_SLOTS = 2


def parse_page(markdown: str, page_number: int, *, width: int = 0, height: int = 0,
               page_size_pt: tuple[float, float] | None = None) -> list[Element]:
    """Split one page's Markdown into elements in reading order."""
    blocks = _blocks(markdown)
    elements: list[Element] = []
    for kind, start, end in blocks:
        source = markdown[start:end]
        elements.extend(_elements(kind, source, start, end, page_number, width, height,
                                  page_size_pt))
    for index, element in enumerate(elements):
        element.index = index
    _mark_captions(elements)
    _mark_page_numbers(elements)
    return elements


def _line_offsets(text: str) -> list[tuple[int, int]]:
    offsets, pos = [], 0
    for line in text.splitlines(keepends=True):
        offsets.append((pos, pos + len(line)))
        pos += len(line)
    return offsets


def _starts_block(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped.lower().startswith("<table") or stripped.startswith(("$$", "\\["))
                or FIGURE_TAG.match(stripped) or _HEADING.match(stripped)
                or _FENCE.match(line) or _THINK.match(line))


def _blocks(text: str) -> list[tuple[str, int, int]]:
    """(kind, start, end) spans of the raw blocks, in order."""
    lines = _line_offsets(text)
    blocks: list[tuple[str, int, int]] = []
    i = 0

    def line_at(pos: int) -> int:
        for j in range(i, len(lines)):
            if lines[j][0] <= pos < lines[j][1]:
                return j
        return len(lines) - 1

    while i < len(lines):
        start, end = lines[i]
        line = text[start:end]
        stripped = line.strip()
        lower = stripped.lower()
        if not stripped or _THINK.match(line):
            i += 1
            continue
        offset = start + (len(line) - len(line.lstrip()))
        if lower.startswith("<table"):
            close = text.lower().find("</table>", offset)
            stop = len(text) if close < 0 else close + len("</table>")
            blocks.append(("table", offset, stop))
            i = line_at(stop - 1) + 1
            rest = text[stop:lines[i - 1][1]] if i - 1 < len(lines) else ""
            if rest.strip():
                blocks.append(("paragraph", stop, lines[i - 1][1]))
            continue
        if stripped.startswith(("$$", "\\[")):
            opener, closer = ("$$", "$$") if stripped.startswith("$$") else ("\\[", "\\]")
            close = text.find(closer, offset + len(opener))
            if close < 0:
                stop = _paragraph_end(text, lines, i)
            else:
                stop = close + len(closer)
                j = line_at(stop - 1)
                tail = text[stop:lines[j][1]]
                number = _EQ_NUMBER.match(tail)
                if number is None and not tail.strip() and j + 1 < len(lines):
                    after = text[lines[j + 1][0]:lines[j + 1][1]]
                    if _EQ_NUMBER.match(after):
                        stop = lines[j + 1][1]
                elif number is not None:
                    stop = lines[j][1]
            blocks.append(("formula", offset, stop))
            i = line_at(max(offset, stop - 1)) + 1
            rest_end = lines[i - 1][1]
            if text[stop:rest_end].strip():  # text after the closing delimiter: keep it
                blocks.append(("paragraph", stop, rest_end))
            continue
        if FIGURE_TAG.match(stripped):
            blocks.append(("figure_line", offset, end))
            i += 1
            continue
        if _FENCE.match(line):
            fence = _FENCE.match(line).group(1)  # type: ignore[union-attr]
            j = i + 1
            while j < len(lines) and not text[lines[j][0]:lines[j][1]].strip().startswith(fence):
                j += 1
            stop = lines[min(j, len(lines) - 1)][1]
            blocks.append(("code", offset, stop))
            i = j + 1
            continue
        if _HEADING.match(stripped):
            blocks.append(("heading", offset, end))
            i += 1
            continue
        is_list = bool(_LIST_ITEM.match(line))
        j = i + 1
        while j < len(lines):
            nxt = text[lines[j][0]:lines[j][1]]
            if not nxt.strip() or _starts_block(nxt):
                break
            if is_list != bool(_LIST_ITEM.match(nxt)) and not (is_list and nxt[:1] in " \t"):
                break
            j += 1
        blocks.append(("list" if is_list else "paragraph", offset, lines[j - 1][1]))
        i = j
    return blocks


def _paragraph_end(text: str, lines: list[tuple[int, int]], i: int) -> int:
    j = i + 1
    while j < len(lines) and text[lines[j][0]:lines[j][1]].strip():
        j += 1
    return lines[j - 1][1]


def _elements(kind: str, source: str, start: int, end: int, page: int, width: int,
              height: int, page_size_pt: tuple[float, float] | None) -> list[Element]:
    span = (start, start + len(source.rstrip()))
    if kind == "table":
        table = parse_table(source)
        return [Element(kind="table", text=table.to_text(), page_number=page, index=0,
                        span=span, table=table)]
    if kind == "formula":
        return [_formula(source, page, span)]
    if kind == "figure_line":
        return _figures(source, start, page, width, height, page_size_pt)
    if kind == "code":
        lines = source.strip().split("\n")
        closed = len(lines) > 1 and lines[-1].strip()[:3] in ("```", "~~~")
        if closed:
            lines = lines[:-1]
        info = lines[0].strip()[3:].strip()
        # in a closed fence a one-word info string is the language; otherwise it is text
        language = closed and len(lines) > 1 and re.fullmatch(r"[\w+#.-]*", info)
        head = [] if language else [info]
        inner = "\n".join([*head, *lines[1:]]).strip("\n")
        return [Element(kind="code", text=inner, page_number=page, index=0, span=span)]
    if kind == "heading":
        match = _HEADING.match(source.strip())
        assert match is not None
        return [Element(kind="heading", text=match.group(2).strip(), level=len(match.group(1)),
                        page_number=page, index=0, span=span)]
    element_kind: ElementKind = "list" if kind == "list" else "paragraph"
    return [Element(kind=element_kind, text=source.strip(), page_number=page, index=0,
                    span=span)]


def _formula(source: str, page: int, span: tuple[int, int]) -> Element:
    text = source.strip()
    number = None
    lines = text.split("\n")
    inline_number = re.search(r"(\$\$|\\\])[ \t]*\(([\w.\-]{1,12})\)[ \t]*$", lines[-1])
    if _EQ_NUMBER.match(lines[-1]) and len(lines) > 1:
        number = _EQ_NUMBER.match(lines[-1]).group(1)  # type: ignore[union-attr]
        body = "\n".join(lines[:-1]).strip()
    elif inline_number:
        number = inline_number.group(2)
        body = text[: len(text) - len(lines[-1])] + lines[-1][: inline_number.end(1)]
        body = body.strip()
    else:
        body = text
    if body.startswith("$$"):
        latex = body[2:-2] if body.endswith("$$") and len(body) >= 4 else body[2:]
    else:
        latex = body[2:-2] if body.endswith("\\]") else body[2:]
    return Element(kind="formula", text=text, latex=latex.strip(), equation_number=number,
                   page_number=page, index=0, span=span)


def _figures(source: str, start: int, page: int, width: int, height: int,
             page_size_pt: tuple[float, float] | None) -> list[Element]:
    out: list[Element] = []
    last = 0
    for match in FIGURE_TAG.finditer(source):
        between = source[last:match.start()].strip()
        if between:
            out.append(Element(kind="paragraph", text=between, page_number=page, index=0,
                               span=(start + last, start + match.start())))
        last = match.end()
        bbox = (int(match.group(1)), int(match.group(2)), int(match.group(3)),
                int(match.group(4)))
        if not valid_box(bbox):
            continue
        out.append(Element(
            kind="figure", text="", page_number=page, index=0,
            span=(start + match.start(), start + match.end()), bbox=bbox,
            pixel_bbox=to_pixels(bbox, width, height) if width and height else None,
            pdf_bbox=to_points(bbox, page_size_pt) if page_size_pt else None))
    rest = source[last:].strip()
    if rest:
        out.append(Element(kind="paragraph", text=rest, page_number=page, index=0,
                           span=(start + last, start + len(source.rstrip()))))
    return out


def _mark_captions(elements: list[Element]) -> None:
    """A paragraph starting Figure/Table … right after a figure or table (or right
    before a table, where table captions usually stand) is its caption."""
    for i, element in enumerate(elements):
        if element.kind != "paragraph" or not _CAPTION.match(element.text):
            continue
        before = elements[i - 1].kind if i > 0 else None
        after = elements[i + 1].kind if i + 1 < len(elements) else None
        if before in ("figure", "table") or after == "table":
            element.kind = "caption"


def _mark_page_numbers(elements: list[Element]) -> None:
    """Standalone page numbers near the top or bottom of the page are furniture."""
    slots = {*range(min(_FURNITURE_SLOTS, len(elements))),
             *range(max(0, len(elements) - _FURNITURE_SLOTS), len(elements))}
    for i in slots:
        element = elements[i]
        if element.kind in ("paragraph", "heading", "list") and \
                _PAGE_NUMBER.match(html.unescape(element.text).strip("*_ ")):
            element.kind = "page_furniture"


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\d+", "#", text.lower())).strip()


def mark_running_furniture(pages: Sequence[list[Element]], *, min_share: float = 0.5,
                           min_pages: int = 3) -> None:
    """Flag running headers/footers: first or last lines repeated on most pages."""
    if len(pages) < min_pages:
        return
    counts: dict[str, int] = {}
    edge: list[list[tuple[Element, str]]] = []
    for elements in pages:
        candidates = [e for e in elements[:1] + elements[-1:]
                      if e.kind in ("paragraph", "heading") and 0 < len(e.text) <= 150]
        unique = list({id(e): e for e in candidates}.values())
        keyed = [(e, _normalise(e.text)) for e in unique]
        edge.append(keyed)
        for key in {k for _, k in keyed}:
            counts[key] = counts.get(key, 0) + 1
    needed = max(min_pages, int(len(pages) * min_share + 0.999))
    for keyed in edge:
        for element, key in keyed:
            if counts[key] >= needed:
                element.kind = "page_furniture"
