"""Tables from the model into grids: HTML (beautifulsoup4's lenient html.parser)
and GFM pipe tables.

HTML tables may carry rowspan/colspan (quoted or not), ``<thead>``, ``<th>``,
``<br>``, entities, unclosed tags, and may be cut off by truncation.

Header rows: ``<thead>`` rows or rows of ``<th>`` cells; a pipe table's rows
above its delimiter row; when those leave value columns unnamed or alike (a label
spanning years, which a pipe table cannot span), the rows under them that go on
labelling columns too. Without any of those, the first row is inferred to be a
header, conservatively, when it holds no numbers (years aside) and either has a
cell spanning several columns, or stands over a column whose body is mostly
numbers; a first row of one cell of text ("March 31,") over such a header is a
header row too. Rows that header cells span down into (rowspan) are header rows too.
"""

from __future__ import annotations

import html as html_lib
import re
from dataclasses import dataclass, field

from bs4 import BeautifulSoup, Tag
from bs4.element import PageElement

from .figures import IMAGE_REF, read_image_ref
from .model import TableData
from .table_text import is_units

_SPACES = re.compile(r"[ \t\r\f\v]+")
_MAX_SPAN = 1000
_NUMBER = re.compile(
    r"^[\s(\[]*[-+−–~≈<>≤≥±]?\s*[$€£¥]?\s*\(?\s*[-+−–]?\d[\d\s,.'’]*\s*(?:%|‰|[kKmMbB]n?)?[\s)\]*]*$")
#: a year, perhaps with a letter or a footnote mark ("2018 A", "2018(1)", "2018 1", "20181")
_YEAR = re.compile(r"^\s*(?:1[89]|20)\d\d\s*(?:[A-Za-z]|\(\d\)|\d)?\s*$")
#: how a superscript and a subscript read as text, in cells and prose alike: ``^2``, ``_i``
SCRIPT_MARKS = {"sup": "^", "sub": "_"}
_EMPHASIS = re.compile(r"(?<!\w)(\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)\1(?!\w)")
_PLACEHOLDER = re.compile(r"^\s*(?:[-–—]+|n/?a|nm|none|nil)\s*$", re.IGNORECASE)
#: markup that only styles or breaks text: left open around cells (``<tr><span><td>
#: </span>x``) Python's parser would close the cell with it; a block's bounds are line
#: breaks in the cell (as ``<br>``), the rest is dropped
_INLINE_TAG = re.compile(r"</?(?:span|font|b|i|u|em|strong)\b[^<>]*>", re.IGNORECASE)
_BLOCK_TAG = re.compile(r"</?(?:div|center|p)\b[^<>]*>", re.IGNORECASE)
_DELIMITER_CELL = re.compile(r"^\s*:?-{1,}:?\s*$")


@dataclass
class _Grid:
    """Rows being built, with what header inference needs to know about them."""

    rows: list[list[str]] = field(default_factory=list)
    marked: list[bool] = field(default_factory=list)   # <thead>/<th> rows
    colspans: list[bool] = field(default_factory=list)  # a cell spans columns
    rowspans: list[int] = field(default_factory=list)   # the tallest cell of the row


@dataclass(frozen=True)
class Caption:
    text: str
    #: where the caption stands in the table's block
    span: tuple[int, int]


@dataclass(frozen=True)
class CaptionedTable:
    """A table written with its caption inside its markup (a LaTeX float, DocTags)."""

    table: TableData
    caption: Caption | None
    #: where the cells start in the block (its end when there are none)
    cells_at: int


def parse_table(html: str) -> TableData:
    """Parse one ``<table>`` (possibly unterminated) into a rectangular grid."""
    # without a tag there is no table (and bs4 would warn that the text looks like a file)
    table = BeautifulSoup(_BLOCK_TAG.sub("\n", _INLINE_TAG.sub("", html)),
                          "html.parser").find("table") if "<" in html else None
    grid = _Grid()
    if isinstance(table, Tag):
        _unnest_rows_and_cells(table)
        _read_rows(table, grid)
        stray = [_plain(s) for s in table.find_all(string=True)
                 if s.strip() and _outside_rows(s)]
        if stray:  # text the model put inside <table> but outside any cell: keep it
            _append(grid, [" ".join(s for s in stray if s)], False, False, 1)
    rows = rectangular(grid.rows)
    marked = 0
    for flag in grid.marked:
        if not flag:
            break
        marked += 1
    header_rows = extend_header(rows, marked) or infer_header_rows(rows, grid.colspans,
                                                                   grid.rowspans)
    truncated = "</table>" not in html.lower()
    return TableData(rows=rows, header_rows=header_rows, html=html, truncated=truncated)


def _unnest_rows_and_cells(table: Tag) -> None:
    """A row or cell left open ends where the next one starts, as in HTML
    (``<tr><td>a<tr><td>b``: two rows, ``<td>a<td>b``: two cells, end tags being
    optional); Python's parser nests the second in the first instead."""
    for row in table.find_all("tr"):
        outer = row.find_parent(["td", "th", "tr", "table"])
        while isinstance(outer, Tag) and outer.name in ("td", "th", "tr"):
            _move_after(row, outer if outer.name == "tr" else outer.find_parent("tr") or outer)
            outer = row.find_parent(["td", "th", "tr", "table"])
    for cell in table.find_all(["td", "th"]):
        outer = cell.find_parent(["td", "th", "tr", "table"])
        while isinstance(outer, Tag) and outer.name in ("td", "th"):
            _move_after(cell, outer)
            outer = cell.find_parent(["td", "th", "tr", "table"])


def _move_after(node: Tag, anchor: PageElement) -> None:
    """Move ``node`` and what follows it in its parent (which ended where it began)
    after ``anchor``."""
    for moving in [node, *node.next_siblings]:
        anchor.insert_after(moving.extract())
        anchor = moving


def _read_rows(table: Tag, grid: _Grid) -> None:
    pending: Pending = {}
    for tr in table.find_all("tr"):
        if not isinstance(tr, Tag) or tr.find_parent("table") is not table:
            continue
        row: list[str] = []
        # a cell of this row, even wrapped in stray markup (``<tr><b><td>``)
        cells = [c for c in tr.find_all(["td", "th"]) if isinstance(c, Tag)
                 and c.find_parent(["tr", "td", "th"]) is tr]
        col, wide, tall = 0, False, 1
        for cell in cells:
            col = fill_pending(row, pending, col)
            text = _cell_text(cell)
            colspan, rowspan = _span(cell.get("colspan")), _span(cell.get("rowspan"))
            wide, tall = wide or colspan > 1, max(tall, rowspan)
            for offset in range(colspan):
                row.append(text)
                if rowspan > 1:
                    pending[col + offset] = (rowspan - 1, text)
            col += colspan
        fill_pending(row, pending, col, drain=True)
        if row:
            marked = tr.find_parent("thead") is not None or (
                bool(cells) and all(c.name == "th" for c in cells))
            _append(grid, row, marked, wide, tall)


def _append(grid: _Grid, row: list[str], marked: bool, wide: bool, tall: int) -> None:
    grid.rows.append(row)
    grid.marked.append(marked)
    grid.colspans.append(wide)
    grid.rowspans.append(tall)


def rectangular(rows: list[list[str]]) -> list[list[str]]:
    width = max((len(r) for r in rows), default=0)
    return [r + [""] * (width - len(r)) for r in rows]


def is_number(cell: str) -> bool:
    """A cell that reads as a quantity (``12``, ``-3.5%``, ``$1,200``, ``(0.4)``)."""
    return bool(_NUMBER.match(cell))


def infer_header_rows(rows: list[list[str]], colspans: list[bool] | None = None,
                      rowspans: list[int] | None = None) -> int:
    """How many leading rows are a header in a table that does not say (0 or more)."""
    if len(rows) > 2 and _title_row(rows[0]):
        below = infer_header_rows(rows[1:], colspans and colspans[1:], rowspans and rowspans[1:])
        if below:
            return 1 + below
    if len(rows) < 2 or not header_like(rows[0]):
        return 0
    body = rows[1:]
    spans_columns = bool(colspans and colspans[0])
    if not (spans_columns or _numbers_under_text(rows[0], body)):
        return 0
    depth = max(1, min(rowspans[0] if rowspans else 1, len(rows) - 1))
    count = 1
    while count < depth and header_like(rows[count]):
        count += 1
    return _labelling_rows(rows, count)


def extend_header(rows: list[list[str]], count: int) -> int:
    """Header rows the markup states (``<th>``, rows above a pipe table's delimiter, a
    LaTeX rule), and the rows under them that go on labelling columns, when the stated
    rows leave value columns unnamed or alike: a pipe table has no spans, so a label
    spanning years (``| | Years Ended | | |``) stands over them in the body."""
    if not count or _columns_named_apart(rows, count):
        return count
    return _labelling_rows(rows, count)


def _columns_named_apart(rows: list[list[str]], count: int) -> bool:
    """Does the header over each column of numbers name it, apart from the others?
    (Columns of text are row labels, which a stub cell may span.)"""
    labels = [tuple(row[col].strip() for row in rows[:count]) for col in range(len(rows[0]))
              if _mostly_numbers([row[col] for row in rows[count:]])]
    return all(any(label) for label in labels) and len(set(labels)) == len(labels)


def _labelling_rows(rows: list[list[str]], count: int) -> int:
    """``count`` and the rows after it that still label columns (years under a spanned
    label, a units row, a row naming every column over numbers)."""
    while count < len(rows) - 1 and (_sub_header(rows[count]) or _column_titles(
            rows[count], rows[count + 1:])):
        count += 1
    return count


def _title_row(row: list[str]) -> bool:
    """A row with one cell of text and nothing else ("March 31,", "($ in millions)"): a
    header row when the rows under it start a header."""
    cells = [c for c in row if c.strip()]
    return len(cells) == 1 and header_like(cells)


def _sub_header(row: list[str]) -> bool:
    """A row under a header that goes on labelling columns (years or dates under a
    spanned label, a units row): an empty stub cell (or one stating units) over
    labels, not values."""
    labels = [c for c in row[1:] if c.strip()]
    stub = row[0].strip()
    return ((not stub or is_units(stub)) and bool(labels) and header_like(row)
            and not any(_PLACEHOLDER.match(c) for c in labels))


def _column_titles(row: list[str], below: list[list[str]]) -> bool:
    """A row naming every value column (its stub may name the row labels) over a body
    of numbers: the lowest header row under a spanned label."""
    values = row[1:]
    return (bool(values) and all(c.strip() for c in values) and header_like(row)
            and not any(_PLACEHOLDER.match(c) for c in values)
            and _numbers_under_text(row, below))


def header_like(row: list[str]) -> bool:
    """A row that may label columns: some text, and no number but a year."""
    cells = [c for c in row if c.strip()]
    return bool(cells) and not any(is_number(c) and not _YEAR.match(c) for c in cells)


def _numbers_under_text(header: list[str], body: list[list[str]]) -> bool:
    """Some column has a text header over a body that is mostly numbers."""
    return any(title.strip() and _mostly_numbers([row[col] for row in body if col < len(row)])
               for col, title in enumerate(header))


def _mostly_numbers(cells: list[str]) -> bool:
    """At least half the non-empty cells are numbers, and one is."""
    values = [c for c in cells if c.strip()]
    numbers = sum(1 for v in values if is_number(v))
    return numbers >= 1 and numbers * 2 >= len(values)


#: column -> (rows a cell spanning down from above still covers, its text)
Pending = dict[int, tuple[int, str]]


def fill_pending(row: list[str], pending: Pending, col: int, drain: bool = False) -> int:
    """Place cells spanning down from earlier rows at ``col`` (and beyond, if draining)."""
    while col in pending or (drain and any(c >= col for c in pending)):
        row.append(take_pending(pending, col) if col in pending else "")
        col += 1
    return col


def take_pending(pending: Pending, col: int) -> str:
    """The text of the cell spanning down into ``col``, one row of its span used up."""
    left, text = pending.pop(col)
    if left > 1:
        pending[col] = (left - 1, text)
    return text


def _span(value: object) -> int:
    try:
        return max(1, min(_MAX_SPAN, int(str(value).strip().strip("\"'"))))
    except (TypeError, ValueError, OverflowError):
        return 1


def _cell_text(cell: Tag) -> str:
    """A cell's text with its inline markup read: ``<br>`` a line break, ``<sup>2</sup>``
    as ``^2``, ``<sub>i</sub>`` as ``_i``, other tags and Markdown emphasis dropped."""
    for br in cell.find_all("br"):
        br.replace_with("\n")
    for tag, mark in SCRIPT_MARKS.items():
        for script in reversed(cell.find_all(tag)):   # the innermost first, if nested
            script.replace_with(mark + script.get_text())
    return _plain(_EMPHASIS.sub(r"\2", cell.get_text()))


def _pipe_cell_text(cell: str) -> str:
    """A pipe-table cell: inline HTML read as in an HTML cell (a ``<br>`` in a pipe cell
    is a line break), Markdown emphasis dropped."""
    if "<" in cell:
        fragment = BeautifulSoup(f"<td>{cell}</td>", "html.parser").find("td")
        if isinstance(fragment, Tag):
            return _cell_text(fragment)
    return _plain(_EMPHASIS.sub(r"\2", cell))


def _plain(text: str) -> str:
    """Cell text: spaces collapsed, a Markdown image reference as its alt text."""
    text = IMAGE_REF.sub(lambda m: f" {read_image_ref(m).alt} ", text)
    lines = [_SPACES.sub(" ", line).strip() for line in text.split("\n")]
    return "\n".join(line for line in lines if line)


def _outside_rows(node: object) -> bool:
    """True for text that is not inside a cell of a row (so the grid would miss it)."""
    cell = node.find_parent(["td", "th"])  # type: ignore[attr-defined]
    return cell is None or cell.find_parent("tr") is None


def is_delimiter_row(line: str) -> bool:
    """A pipe table's ``|---|:--:|`` line."""
    cells = split_pipe_row(line)
    return "|" in line and bool(cells) and all(_DELIMITER_CELL.match(c) for c in cells)


def split_pipe_row(line: str) -> list[str]:
    """The cells of one pipe-table row (``\\|`` is a literal bar)."""
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    cells = re.split(r"(?<!\\)\|", body)
    return [_pipe_cell_text(c.replace("\\|", "|")) for c in cells]


def parse_pipe_table(source: str) -> TableData:
    """A GFM pipe table: rows above the delimiter row are the header (inferred without one)."""
    rows: list[list[str]] = []
    header_rows = 0
    for line in re.split(r"\r\n|\r|\n", source):   # the block parser's lines
        if not line.strip():
            continue
        if is_delimiter_row(line):
            header_rows = header_rows or len(rows)
            continue
        rows.append(split_pipe_row(line))
    rows = rectangular(rows)
    header_rows = extend_header(rows, header_rows) or infer_header_rows(rows)
    return TableData(rows=rows, header_rows=header_rows, html=grid_html(rows, header_rows))


def grid_html(rows: list[list[str]], header_rows: int) -> str:
    """An HTML table equivalent to a grid (header rows in ``<thead>`` as ``<th>``)."""
    def row_html(row: list[str], tag: str) -> str:
        cells = "".join(f"<{tag}>{html_lib.escape(c)}</{tag}>" for c in row)
        return f"<tr>{cells}</tr>"

    head = "".join(row_html(r, "th") for r in rows[:header_rows])
    body = "".join(row_html(r, "td") for r in rows[header_rows:])
    return (f"<table>{f'<thead>{head}</thead>' if head else ''}"
            f"<tbody>{body}</tbody></table>")
