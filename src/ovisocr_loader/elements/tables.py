"""HTML tables from the model into grids (beautifulsoup4's lenient html.parser).

The model's tables may carry rowspan/colspan (quoted or not), ``<thead>``,
``<th>``, ``<br>``, entities, unclosed tags, and may be cut off by truncation.
"""

from __future__ import annotations

import re

from bs4 import BeautifulSoup, Tag

from .model import TableData

_SPACES = re.compile(r"[ \t\r\f\v]+")
_MAX_SPAN = 1000


def parse_table(html: str) -> TableData:
    """Parse one ``<table>`` (possibly unterminated) into a rectangular grid."""
    soup = BeautifulSoup(html, "html.parser")
    table = soup.find("table")
    rows: list[list[str]] = []
    header_flags: list[bool] = []
    pending: dict[int, tuple[int, str]] = {}   # column -> (rows still covered, text)
    if isinstance(table, Tag):
        for tr in table.find_all("tr"):
            if not isinstance(tr, Tag) or tr.find_parent("table") is not table:
                continue
            row: list[str] = []
            cells = [c for c in tr.find_all(["td", "th"], recursive=False) if isinstance(c, Tag)]
            in_head = tr.find_parent("thead") is not None
            all_th = bool(cells) and all(c.name == "th" for c in cells)
            col = 0
            for cell in cells:
                col = _fill_pending(row, pending, col)
                text = _cell_text(cell)
                colspan = _span(cell.get("colspan"))
                rowspan = _span(cell.get("rowspan"))
                for offset in range(colspan):
                    row.append(text)
                    if rowspan > 1:
                        pending[col + offset] = (rowspan - 1, text)
                col += colspan
            _fill_pending(row, pending, col, drain=True)
            if row:
                rows.append(row)
                header_flags.append(in_head or all_th)
    if isinstance(table, Tag):
        stray = [s.strip() for s in table.find_all(string=True)
                 if s.strip() and _outside_rows(s)]
        if stray:  # text the model put inside <table> but outside any cell: keep it
            rows.append([" ".join(stray)])
            header_flags.append(False)
    width = max((len(r) for r in rows), default=0)
    rows = [r + [""] * (width - len(r)) for r in rows]
    header_rows = 0
    for flag in header_flags:
        if not flag:
            break
        header_rows += 1
    truncated = "</table>" not in html.lower()
    return TableData(rows=rows, header_rows=header_rows, html=html, truncated=truncated)


def _fill_pending(row: list[str], pending: dict[int, tuple[int, str]], col: int,
                  drain: bool = False) -> int:
    """Place cells spanning down from earlier rows at ``col`` (and beyond, if draining)."""
    while col in pending or (drain and any(c >= col for c in pending)):
        if col not in pending:
            row.append("")
            col += 1
            continue
        left, text = pending[col]
        row.append(text)
        if left <= 1:
            del pending[col]
        else:
            pending[col] = (left - 1, text)
        col += 1
    return col


def _span(value: object) -> int:
    try:
        return max(1, min(_MAX_SPAN, int(str(value).strip().strip("\"'"))))
    except (TypeError, ValueError):
        return 1


def _cell_text(cell: Tag) -> str:
    for br in cell.find_all("br"):
        br.replace_with("\n")
    lines = [_SPACES.sub(" ", line).strip() for line in cell.get_text().split("\n")]
    return "\n".join(line for line in lines if line)


def _outside_rows(node: object) -> bool:
    """True for text that is not inside a cell of a row (so the grid would miss it)."""
    cell = node.find_parent(["td", "th"])  # type: ignore[attr-defined]
    return cell is None or cell.find_parent("tr") is None
