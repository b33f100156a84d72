"""OTSL, the table language of DocTags (SmolDocling, Granite-Docling), as a grid.

``<otsl>`` holds one token per grid position, each row ended by ``<nl>``: ``<fcel>`` a
cell (its text follows), ``<ecel>`` an empty one, ``<ched>``/``<rhed>``/``<srow>`` a
column-header, row-header or section-row cell, and the positions a cell spans:
``<lcel>`` (the cell to the left goes on), ``<ucel>`` (the one above), ``<xcel>``
(both). As for HTML spans, a spanned position repeats its cell's text. The leading rows
of column-header cells are the header (inferred when there are none). A ``<caption>``
(docling writes it after the cells) is the table's caption; location tokens and other
tags are dropped. A table cut off before ``</otsl>`` keeps its rows (``truncated``).
"""

from __future__ import annotations

import re

from .html_document import DELETED
from .model import TableData
from .tables import (
    Caption,
    CaptionedTable,
    extend_header,
    grid_html,
    infer_header_rows,
    rectangular,
)

_OPEN = "<otsl>"
_CLOSE = "</otsl>"
_TOKEN = re.compile(r"<(fcel|ecel|lcel|ucel|xcel|nl|ched|rhed|srow)>")
_CAPTION = re.compile(r"<caption>(?P<text>.*?)(?:</caption>|\Z)", re.DOTALL)
_OTHER_TAG = re.compile(r"</?[a-z_][a-z0-9_]*/?>")
_SPANNED = {"lcel", "ucel", "xcel"}


def parse_otsl(source: str) -> CaptionedTable:
    """The table (and caption) of an ``<otsl>`` block."""
    start = source.find(_OPEN)
    start = start + len(_OPEN) if start >= 0 else 0
    end = source.find(_CLOSE, start)
    body_end = end if end >= 0 else len(source)
    caption = _CAPTION.search(source, start, body_end)
    cells = source[start:body_end] if caption is None else (
        source[start:caption.start()] + " " + source[caption.end():body_end])
    rows, header_rows, spans = _grid(cells)
    header_rows = extend_header(rows, header_rows) or infer_header_rows(rows, spans)
    table = TableData(rows=rows, header_rows=header_rows, html=grid_html(rows, header_rows),
                      truncated=end < 0)
    first_cell = _TOKEN.search(source, start, body_end)
    return CaptionedTable(table, _caption(caption),
                          first_cell.start() if first_cell else len(source))


def _caption(match: re.Match[str] | None) -> Caption | None:
    if match is None:
        return None
    text = _cell_text(match.group("text"))
    return Caption(text, match.span()) if text else None


def _grid(cells: str) -> tuple[list[list[str]], int, list[bool]]:
    """The rectangular grid, how many leading rows are all column headers, and which
    rows have a cell spanning columns."""
    rows: list[list[str]] = [[]]
    kinds: list[list[str]] = [[]]
    pieces = _TOKEN.split(cells)   # text, then (kind, text) pairs
    if _cell_text(pieces[0]):       # text before any token: a cell, never lost
        rows[0].append(_cell_text(pieces[0]))
        kinds[0].append("fcel")
    for kind, text in zip(pieces[1::2], pieces[2::2], strict=True):
        if kind == "nl":
            rows.append([])
            kinds.append([])
            if not _cell_text(text):
                continue
            kind = "fcel"   # text after a row's end: a cell of the next, never lost
        rows[-1].append(_cell_text(text) or _spanned(kind, rows))
        kinds[-1].append(kind)
    while len(rows) > 1 and not rows[-1]:
        rows.pop()
        kinds.pop()
    rows = rectangular(rows) if any(rows) else []
    return rows, _header_rows(kinds[:len(rows)]), [
        any(kind in ("lcel", "xcel") for kind in row) for row in kinds[:len(rows)]]


def _spanned(kind: str, rows: list[list[str]]) -> str:
    """The text a spanning position repeats: the cell to its left, or above it."""
    row = rows[-1]
    if kind in ("lcel", "xcel") and row:
        return row[-1]
    if kind in ("ucel", "xcel") and len(rows) > 1 and len(row) < len(rows[-2]):
        return rows[-2][len(row)]
    return ""


def _header_rows(kinds: list[list[str]]) -> int:
    """Leading rows whose cells are column headers (or span one, or are empty)."""
    count = 0
    for row in kinds:
        own = [kind for kind in row if kind not in _SPANNED and kind != "ecel"]
        if not own or any(kind != "ched" for kind in own):
            break
        count += 1
    return count if count < len(kinds) else 0


def _cell_text(text: str) -> str:
    return " ".join(_OTHER_TAG.sub(" ", text.replace(DELETED, "")).split())
