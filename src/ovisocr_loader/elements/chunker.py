"""One structure-aware chunker for every integration.

Consecutive elements are packed up to a token budget. A heading starts a new
chunk (consecutive headings share one, with the text they head) and sets the
heading path; a table or formula is never split, except a
table larger than the budget, which is split by rows with its header row
repeated in every part. Page furniture is left out of chunk text (it stays
flagged on the elements).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from .model import Element, TableData

if TYPE_CHECKING:  # the document model imports elements; keep the import one way at runtime
    from ..document import ParsedDocument

TokenCounter = Callable[[str], int]


def approx_tokens(text: str) -> int:
    """About four characters per token: close enough for budgets, needs no tokenizer."""
    return math.ceil(len(text) / 4)


class Chunk(BaseModel):
    """A retrievable piece of a document."""

    model_config = ConfigDict(extra="forbid")

    index: int
    text: str
    heading_path: list[str] = Field(default_factory=list)
    pages: list[int] = Field(default_factory=list)
    elements: list[Element] = Field(default_factory=list)


def element_text(element: Element) -> str:
    """How an element reads inside a chunk (tables as embedding-friendly plain text)."""
    if element.kind == "heading":
        return "#" * (element.level or 1) + " " + element.text
    if element.kind == "figure":
        return ""
    return element.text


HeadingPath = list[tuple[int, str]]


def enter_heading(path: HeadingPath, heading: Element) -> None:
    """Update ``(level, text)`` pairs in place: a heading closes its level and deeper ones."""
    level = heading.level or 1
    while path and path[-1][0] >= level:
        path.pop()
    path.append((level, heading.text))


def chunk_document(doc: ParsedDocument, max_tokens: int = 512, *,
                   count_tokens: TokenCounter = approx_tokens,
                   include_furniture: bool = False,
                   page_breaks: bool = False) -> list[Chunk]:
    """Split a parsed document into chunks of at most ``max_tokens`` (tables aside).

    ``page_breaks=True`` ends a chunk at every page boundary (the heading path
    carries on), so each chunk cites exactly one page.
    """
    if max_tokens < 16:
        raise ValueError("max_tokens must be at least 16")
    chunks: list[Chunk] = []
    path: HeadingPath = []
    current: list[tuple[Element, str]] = []
    used = 0

    def flush() -> None:
        nonlocal current, used
        if current and any(text.strip() or e.kind == "figure" for e, text in current):
            _emit(chunks, current, [h for _, h in path])
        current, used = [], 0

    for page in doc.pages:
        if page_breaks:
            flush()
        for element in page.elements:
            if element.kind == "page_furniture" and not include_furniture:
                continue
            if element.kind == "heading":
                if any(e.kind != "heading" for e, _ in current):
                    flush()  # consecutive headings stay together with the text they head
                enter_heading(path, element)
            for piece in _pieces(element, max_tokens, count_tokens):
                cost = count_tokens(piece)
                if current and used + cost > max_tokens:
                    flush()
                current.append((element, piece))
                used += cost
    flush()
    return chunks


def _emit(chunks: list[Chunk], parts: list[tuple[Element, str]], heading_path: list[str]
          ) -> None:
    elements = list({id(e): e for e, _ in parts}.values())
    text = "\n\n".join(t for _, t in parts if t.strip())
    pages = sorted({e.page_number for e in elements})
    chunks.append(Chunk(index=len(chunks), text=text, heading_path=heading_path, pages=pages,
                        elements=elements))


def _pieces(element: Element, max_tokens: int, count: TokenCounter) -> list[str]:
    text = element_text(element)
    if count(text) <= max_tokens or element.kind == "formula":
        return [text]
    if element.kind == "table" and element.table is not None:
        return split_table(element.table, max_tokens, count)
    return _split_prose(text, max_tokens, count)


def split_table(table: TableData, max_tokens: int, count: TokenCounter) -> list[str]:
    """Split an oversized table by rows, repeating the header row(s) in each part."""
    header = table.rows[: table.header_rows]
    body = table.rows[table.header_rows:]
    parts: list[str] = []
    rows: list[list[str]] = []
    for row in body:
        candidate = TableData(rows=header + rows + [row], header_rows=table.header_rows,
                              html="").to_text()
        if rows and count(candidate) > max_tokens:
            parts.append(TableData(rows=header + rows, header_rows=table.header_rows,
                                   html="").to_text())
            rows = []
        rows.append(row)
    if rows or not parts:
        parts.append(TableData(rows=header + rows, header_rows=table.header_rows,
                               html="").to_text())
    return parts


def _split_prose(text: str, max_tokens: int, count: TokenCounter) -> list[str]:
    """Split long prose at line, then sentence, then word boundaries."""
    units = [u for u in re.split(r"(?<=\n)|(?<=[.!?])\s+", text) if u and u.strip()]
    pieces: list[str] = []
    buffer = ""
    for unit in units:
        if count(unit) > max_tokens:
            words = unit.split(" ")
            unit_parts, part = [], ""
            for word in words:
                if part and count(part + " " + word) > max_tokens:
                    unit_parts.append(part)
                    part = word
                else:
                    part = f"{part} {word}" if part else word
            unit_parts.append(part)
            if buffer:
                pieces.append(buffer)
                buffer = ""
            pieces.extend(unit_parts)
            continue
        joined = f"{buffer} {unit}".strip() if buffer else unit.strip()
        if buffer and count(joined) > max_tokens:
            pieces.append(buffer)
            buffer = unit.strip()
        else:
            buffer = joined
    if buffer:
        pieces.append(buffer)
    return pieces
