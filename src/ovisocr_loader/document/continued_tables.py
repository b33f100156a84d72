"""A table that a page break cut in two, read as one table again.

Reports print a long table over pages, on the next page with its header rows
repeated or (more often) without them. Read page by page, the rows after the break
lose their column labels: ``Free cash flow: 4,411.`` with no year. The two parts are
one table when nothing but furniture stands between them (the caller's part), they
have as many columns, their columns hold the same kinds of cells, and the second
either repeats the first's header (all of it or its lower rows) or has none of its
own (a pipe table's row of values above its delimiter is no header). A header of
its own that differs, or a different shape, keeps them apart.
"""

from __future__ import annotations

import re

from ..elements.model import TableData
from ..elements.tables import grid_html, header_like, is_number

Row = list[str]
#: a cell that says nothing of its column's kind: empty, or a dash or n/a for a missing
#: value (``$—``, ``(–)``)
_NO_VALUE = re.compile(r"^[\s$€£¥()%]*(?:[-–—]+|n/?a|nm|nil)?[\s$€£¥()%]*$", re.IGNORECASE)


def continues(first: TableData, second: TableData) -> bool:
    """Is ``second``, at the top of a page, the rest of ``first``, at the bottom of the
    page before?"""
    if not first.rows or not second.rows or _width(first) != _width(second):
        return False
    repeated = repeated_header_rows(first, second)
    if _own_header(second) and repeated is None:
        return False
    body = second.rows[repeated or 0:]
    return bool(body) and _kinds_agree(first.rows[first.header_rows:], body)


def _own_header(table: TableData) -> int:
    """The header rows a part states, unless they hold values: a pipe table must have a
    row above its delimiter, so a continuation written as one puts a row of values
    there (``| Costs | 800 | 700 |``)."""
    header = table.rows[:table.header_rows]
    return table.header_rows if all(header_like(row) for row in header) else 0


def join_tables(first: TableData, second: TableData) -> TableData:
    """One table: ``first``'s rows and header, then ``second``'s rows less the header
    it repeats."""
    rows = [*first.rows, *second.rows[repeated_header_rows(first, second) or 0:]]
    return TableData(rows=rows, header_rows=first.header_rows,
                     html=grid_html(rows, first.header_rows), truncated=second.truncated)


def parts_under_header(parts: list[TableData]) -> list[TableData]:
    """Each part of a joined table as a table of its own under the first part's header
    (a header a part repeats left out of its rows)."""
    first = parts[0]
    header = first.rows[:first.header_rows]
    tables = []
    for part in parts:
        rows = [*header, *part.rows[repeated_header_rows(first, part) or 0:]]
        tables.append(TableData(rows=rows, header_rows=first.header_rows,
                                html=grid_html(rows, first.header_rows)))
    return tables


def repeated_header_rows(first: TableData, second: TableData) -> int | None:
    """How many leading rows of ``second`` repeat ``first``'s header (all its rows, or
    its lowest ones: a repeat may leave out a title or spanned label); None when
    ``second`` does not start so."""
    header = [_key(row) for row in first.rows[:first.header_rows]]
    for start in range(len(header)):
        lower = header[start:]
        if [_key(row) for row in second.rows[:len(lower)]] == lower:
            return len(lower)
    return None


def _kinds_agree(above: list[Row], below: list[Row]) -> bool:
    """Does every column hold the same kind of cells (numbers, text) on both sides? A
    column empty on one side agrees with anything."""
    for column in range(_width_of(above)):
        kinds = {_kind([row[column] for row in part if column < len(row)])
                 for part in (above, below)}
        if len(kinds - {"empty"}) > 1:
            return False
    return True


def _kind(cells: list[str]) -> str:
    values = [c for c in cells if not _NO_VALUE.match(c)]
    if not values:
        return "empty"
    numbers = sum(1 for v in values if is_number(v))
    return "number" if numbers * 2 >= len(values) else "text"


def _key(row: Row) -> list[str]:
    return [" ".join(cell.lower().split()) for cell in row]


def _width(table: TableData) -> int:
    return _width_of(table.rows)


def _width_of(rows: list[Row]) -> int:
    return max((len(r) for r in rows), default=0)
