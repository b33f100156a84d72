"""LaTeX tables (Nougat, GOT-OCR and Mathpix write tables so) as the same tables as HTML.

A ``tabular`` (also ``tabularx``, ``tabular*``, ``longtable``, inside a ``table`` float
or not) becomes a rectangular grid: rows end at ``\\\\``, cells at ``&`` (neither inside
braces), ``\\multicolumn{n}{..}{text}`` spans columns and ``\\multirow{n}{..}{text}``
rows as ``colspan``/``rowspan`` do; rules (``\\hline``, ``\\toprule``...) are dropped,
and the rows above the first rule inside the table are its header (inferred without
one). Formatting commands (``\\textbf{x}``) keep their text; math stays as written.
A float's ``\\caption{...}`` is the table's caption. Output cut off mid-table keeps
its rows (``truncated``).
"""

from __future__ import annotations

import re

from .model import TableData
from .tables import (
    Caption,
    CaptionedTable,
    Pending,
    extend_header,
    fill_pending,
    grid_html,
    infer_header_rows,
    rectangular,
    take_pending,
)

#: where a LaTeX table starts (its float, or the tabular itself)
LATEX_TABLE_OPEN = re.compile(r"\\begin\{(table\*?|tabular[x*]?|longtable)\}")
_TABULAR = re.compile(r"\\begin\{(tabular[x*]?|longtable)\}")
_RULE = re.compile(r"\\(?:hline|toprule|midrule|bottomrule|cmidrule|cline|hhline)\b"
                   r"(?:\([^)]*\))?(?:\{[^{}]*\})?\s*")
_LEADING_RULES = re.compile(rf"\s*(?:{_RULE.pattern})*")
#: a rule across the whole table (a partial one, ``\\cline``, sits inside a header)
_FULL_RULE = re.compile(r"\\(?:hline|midrule|hhline)\b")
_SPAN = re.compile(r"\\(multicolumn|multirow)\s*(?:\[[^\]]*\])?\s*\{\s*(\d{1,3})\s*\}")
_CAPTION = re.compile(r"\\caption\*?\s*(?:\[[^\]]*\])?\s*\{")
_FORMAT = re.compile(r"\\(?:textbf|textit|textrm|texttt|textsc|textsf|emph|underline|"
                     r"text|mbox|makecell|shortstack)\s*(?:\[[^\]]*\])?\s*\{")
_SWITCH = re.compile(r"\\(?:bf|it|rm|tt|sc|small|footnotesize|scriptsize|tiny|large|Large|"
                     r"centering|raggedright|raggedleft|bfseries|itshape|normalsize)\b\s*")
_ESCAPED = {"\\%": "%", "\\&": "&", "\\_": "_", "\\#": "#", "\\$": "$", "~": " "}
_MAX_SPAN = 100


def parse_latex_table(source: str) -> CaptionedTable:
    """The table (and caption) of a LaTeX table block."""
    opener = _TABULAR.search(source)
    if opener is None:
        return CaptionedTable(TableData(rows=[], html=""), _caption(source), len(source))
    environment = opener.group(1)
    # past the column spec (tabularx and tabular* have a width first)
    body_start = _skip_groups(source, opener.end(), 2 if environment[-1] in "x*" else 1)
    end = source.find(f"\\end{{{environment}}}", body_start)
    body = source[body_start:end if end >= 0 else len(source)]
    rows, header_rows = _grid(body)
    table = TableData(rows=rows, header_rows=header_rows, html=grid_html(rows, header_rows),
                      truncated=end < 0)
    return CaptionedTable(table, _caption(source), opener.start())


def _caption(source: str) -> Caption | None:
    """The float's ``\\caption{...}``, if it has one with text."""
    opening = _CAPTION.search(source)
    if opening is None:
        return None
    close = _group_end(source, opening.end() - 1)
    closed = close < len(source) or source.endswith("}")   # else cut off inside it
    text = _plain(source[opening.end():close - 1 if closed else close])
    return Caption(text, (opening.start(), close)) if text else None


def _grid(body: str) -> tuple[list[list[str]], int]:
    """The rectangular grid of a tabular's body, and its header rows."""
    rows: list[list[str]] = []
    ruled_after: int | None = None
    pending: Pending = {}
    for raw in _split(body, "\\\\"):
        if _RULE.sub("", raw).strip() == "" and not rows:
            continue
        leading_rules = _LEADING_RULES.match(raw)
        assert leading_rules is not None   # it matches the empty string too
        if rows and ruled_after is None and _FULL_RULE.search(leading_rules.group()):
            ruled_after = len(rows)
        cells = _split(_RULE.sub("", raw).lstrip(), "&")
        if len(cells) == 1 and not cells[0].strip() and not pending:
            continue
        rows.append(_place(cells, pending))
    rows = rectangular(rows)
    if ruled_after is not None and ruled_after < len(rows):
        return rows, extend_header(rows, ruled_after)
    return rows, infer_header_rows(rows)


def _place(cells: list[str], pending: Pending) -> list[str]:
    """One row of the grid, each cell repeated over the columns it spans. A position a
    ``\\multirow`` above covers is written empty in LaTeX: it takes that cell's text."""
    row: list[str] = []
    for cell in cells:
        text, columns, rows_down = _cell(cell)
        for _ in range(columns):
            if len(row) in pending and not text:
                row.append(take_pending(pending, len(row)))
                continue
            pending.pop(len(row), None)
            if rows_down > 1:
                pending[len(row)] = (rows_down - 1, text)
            row.append(text)
    fill_pending(row, pending, len(row), drain=True)
    return row


def _cell(cell: str) -> tuple[str, int, int]:
    """A cell's text, and how many columns and rows it spans."""
    columns = rows = 1
    text = cell.strip()
    while (span := _SPAN.match(text)) is not None:
        count = max(1, min(_MAX_SPAN, int(span.group(2))))
        if span.group(1) == "multicolumn":   # {n}{spec}{text}
            columns, rest = count, _skip_groups(text, span.end(), 1)
        else:                                # {n}{width or *}{text}, or {n}*{text}
            rows, rest = count, _skip_width(text, span.end())
        text = _unbrace(text[rest:].strip())
    return _plain(text), columns, rows


def _plain(text: str) -> str:
    """Cell text as it reads: formatting commands keep their text, escapes their mark."""
    while (command := _FORMAT.search(text)) is not None:
        close = _group_end(text, command.end() - 1)
        text = text[:command.start()] + text[command.end():close - 1] + text[close:]
    text = _SWITCH.sub("", text)
    for escaped, char in _ESCAPED.items():
        text = text.replace(escaped, char)
    text = re.sub(r"(?<!\\)[{}]", "", text) if "$" not in text else text
    return " ".join(text.split())


def _unbrace(text: str) -> str:
    """``{text}`` as ``text`` (a span's last argument)."""
    if text.startswith("{") and _group_end(text, 0) == len(text):
        return text[1:-1]
    return text


def _skip_groups(text: str, position: int, count: int) -> int:
    """Past ``[...]`` options and ``count`` ``{...}`` groups at ``position``."""
    i, seen = position, 0
    while i < len(text) and seen < count:
        i += len(text[i:]) - len(text[i:].lstrip())
        if text.startswith("[", i):
            i = (text.find("]", i) + 1) or len(text)
        elif text.startswith("{", i):
            i, seen = _group_end(text, i), seen + 1
        else:
            break
    return i


def _skip_width(text: str, position: int) -> int:
    """Past a ``\\multirow`` width: ``*`` or one ``{...}`` group."""
    i = position + len(text[position:]) - len(text[position:].lstrip())
    return i + 1 if text.startswith("*", i) else _skip_groups(text, i, 1)


def _group_end(text: str, opening: int) -> int:
    """One past the ``}`` closing the ``{`` at ``opening`` (the end when never closed)."""
    depth = 0
    i = opening
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        depth += {"{": 1, "}": -1}.get(char, 0)
        i += 1
        if depth == 0:
            return i
    return len(text)


def _split(text: str, separator: str) -> list[str]:
    """``text`` split at ``separator`` outside braces (an escaped ``\\&`` is no cell
    break; ``\\\\[2pt]`` ends a row with its spacing)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        if text.startswith(separator, i) and depth == 0:
            parts.append(text[start:i])
            i += len(separator)
            if separator == "\\\\" and text.startswith("[", i):
                i = (text.find("]", i) + 1) or len(text)
            start = i
            continue
        if text[i] == "\\":
            i += 2
            continue
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    parts.append(text[start:])
    return parts
