"""Tables as text for embeddings and keyword search.

A table reads as its units ("(In millions of dollars)"), one line of column
headers in which a label spanning several columns appears once ("Item | Years
Ended July 27, 2019 | July 28, 2018"), then a line per row. The labelled form ties
every value to its row label and to the shortest label that tells its column apart,
in a sentence that reads on its own, as a sentence-embedding model reads best
("Research and development was $ 6,577 in July 27, 2019. Research and development was
$ 6,332 in July 28, 2018."); a row label of more than four words is written once
("Net cash provided by operating activities was $13,189 in 2019 and $17,400 in
2018."). It suits tables whose column labels are short (years, dates,
periods: at most three words); the compact form keeps the values in column order
("Research and development | $ 6,577 | $ 6,332") for the others, where long column
labels repeated before every value would drown the row labels, and for tables too
large for the labelled form. A row with only a label (a section such as "Deferred
tax assets") stays a line of its own.

The forms were chosen by retrieval measurements (benchmarks/bench_retrieval.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from .token_estimate import CJK_CHARACTERS

Grid = list[list[str]]

COLUMN_SEPARATOR = " | "
_UNITS = re.compile(r"\b(?:thousands|millions|billions|'000s?|000s)\b|^\(?\s*in\s+\S+\s*\)?$",
                    re.IGNORECASE)
_MAX_UNITS = 80
#: a note's mark set close after a row label, as OCR writes a superscript ("Accruals1")
_GLUED_MARK = re.compile(r"([a-z]{3})([1-9])$")
_DAY = re.compile(r"^\d{1,2},?$")
_ROW_NUMBER = re.compile(r"^[#(\[]?\d{1,4}[.)\]]?$")
#: a column label that names a period (a year, perhaps fiscal or with a footnote mark, a
#: month, a quarter or half, a span of years or weeks): its values read as "X was V in
#: 2019"; other labels with digits ("Top-1", "Level 2") as "X Top-1: V"
_PERIOD = re.compile(
    r"(?<![\d.,])(?:1[89]|20)\d\d|(?<![\d.,])'\d\d\b|\b(?:FY|F|Q|H)\s?\d"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d"
    r"|\d\s*(?:years?|yrs?|months?|weeks?|days?)\b", re.IGNORECASE)
_CJK = re.compile(f"[{CJK_CHARACTERS}]")
#: a column label of at most this many words goes with every value it labels
SHORT_COLUMN_LABEL = 3
#: a row label of at most this many words goes with every value of its row
SHORT_ROW_LABEL = 4


def is_units(cell: str) -> bool:
    """A header cell that states the table's units ("(In millions of dollars)")."""
    return len(cell) <= _MAX_UNITS and bool(_UNITS.search(cell))


def header_lines(rows: Grid, header_rows: int) -> list[str]:
    """The table's units, and the column-header line (none without header rows)."""
    if not header_rows:
        return []
    columns, units = _header_parts(rows, header_rows)
    lines = [" ".join(units)] if units else []
    above: list[str] = []
    labels = []
    for parts in columns:
        labels.append(" ".join(p for p in parts if p not in above[:len(parts) - 1]))
        above = parts[:-1]
    if any(labels):
        lines.append(COLUMN_SEPARATOR.join(labels).strip(" |"))
    return lines


def row_lines(rows: Grid, header_rows: int, *, compact: bool = False) -> list[str]:
    """One line per body row, in the labelled or the compact form."""
    labels = ["", *_column_labels(rows, header_rows)]
    lines = []
    for row in rows[header_rows:]:
        cells = [c.replace("\n", " ").strip() for c in row]
        cells[0] = _GLUED_MARK.sub(r"\1 (\2)", cells[0])  # "Accruals1": a note's mark
        label = cells[0]
        values = [(v, labels[i]) for i, v in enumerate(cells) if i and v]
        if not values:
            lines.append(label)
        elif compact:
            lines.append(COLUMN_SEPARATOR.join(cells).strip(" |"))
        else:
            lines.append(_labelled_row(label, values))
    return [line for line in lines if line]


def _labelled_row(label: str, values: list[tuple[str, str]]) -> str:
    """Each value a sentence with its row and column: ``Wireless was 1,320 in 2019.`` for
    a period (a year, a date, ``Q3``), ``Aurora Tonnage:
    1200.`` for another column. A row label of more than four words is written once:
    ``Net cash provided by operating activities was $13,189 in 2019 and $17,400 in
    2018.``; so is a row number, which says nothing on its own (``1: Proteomics (Topic)
    and 0.87 (Score).``)."""
    facts = [(f"{v} in {name}" if _PERIOD.search(name) else f"{v} ({name})")
             if name and name != v else v for v, name in values]
    if not label:
        return _and(facts)
    number = bool(_ROW_NUMBER.match(label))
    if label_words(label) <= SHORT_ROW_LABEL and not number:
        return " ".join(_fact(label, v, name) for v, name in values)
    if not number and all(_PERIOD.search(name) for v, name in values if name and name != v):
        return _sentence(f"{label} was {_and(facts)}")
    return _sentence(f"{label}: {_and(facts)}")


def _fact(label: str, value: str, name: str) -> str:
    if not name or name == value:
        return _sentence(f"{label}: {value}")
    if _PERIOD.search(name):
        return _sentence(f"{label} was {value} in {name}")
    return _sentence(f"{label} {name}: {value}")


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?")) else f"{text}."


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def preferred_texts(rows: Grid, header_rows: int) -> Iterator[str]:
    """The table's text forms, best first: the labelled form when every column's label
    is short enough to repeat with each value, then the compact form."""
    if all(label_words(label) <= SHORT_COLUMN_LABEL for label in _column_labels(rows, header_rows)):
        yield table_text(rows, header_rows)
    yield table_text(rows, header_rows, compact=True)


def label_words(label: str) -> int:
    """A label's length in words; two CJK characters count as one (no spaces to split on)."""
    ideographs = len(_CJK.findall(label))
    return len(_CJK.sub(" ", label).split()) + math.ceil(ideographs / 2)


def table_text(rows: Grid, header_rows: int, *, compact: bool = False) -> str:
    """The whole table as text: header lines, then row lines."""
    return "\n".join([*header_lines(rows, header_rows),
                      *row_lines(rows, header_rows, compact=compact)])


def _header_parts(rows: Grid, header_rows: int) -> tuple[list[list[str]], list[str]]:
    """Per column, the distinct header cells over it, top-down, units left out; and
    the units, in order."""
    width = max((len(r) for r in rows), default=0)
    columns: list[list[str]] = []
    units: list[str] = []
    for col in range(width):
        parts: list[str] = []
        for row in rows[:header_rows]:
            cell = (row[col] if col < len(row) else "").replace("\n", " ").strip()
            if cell and is_units(cell):
                units += [] if cell in units else [cell]
            elif cell and cell not in parts:
                parts.append(cell)
        columns.append(parts)
    return columns, units


def _column_labels(rows: Grid, header_rows: int) -> list[str]:
    """The label each value column's values carry (the stub column left out)."""
    return _value_labels(_header_parts(rows, header_rows)[0][1:])


def _value_labels(columns: list[list[str]]) -> list[str]:
    """Each column's shortest suffix of header parts that no other column shares, less
    the words every column's label starts or ends with ("Year ended December 31, 2019"
    and "..., 2018" become "2019" and "2018"; the header line keeps the rest)."""
    labels = []
    for parts in columns:
        label = " ".join(parts)
        for depth in range(1, len(parts)):
            if sum(1 for other in columns if other[-depth:] == parts[-depth:]) == 1:
                label = " ".join(parts[-depth:])
                break
        labels.append(label)
    return _strip_shared_words(labels)


def _strip_shared_words(labels: list[str]) -> list[str]:
    words = [label.split() for label in labels]
    if len(words) < 2 or not all(words):
        return labels
    head = 0
    while all(len(w) > head + 1 for w in words) and len({w[head] for w in words}) == 1:
        head += 1
    while head and any(_DAY.match(w[head]) for w in words):
        head -= 1  # "December 27, 2019" keeps its month, not "27, 2019"
    tail = 0
    while (all(len(w) > head + tail + 1 for w in words)
           and len({w[-tail - 1] for w in words}) == 1):
        tail += 1
    return [" ".join(w[head:len(w) - tail]) for w in words]
