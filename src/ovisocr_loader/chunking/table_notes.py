"""Which paragraphs under a table are its notes.

Reports explain a table's rows in notes right under it: ``(1) Includes acquisition
charges ...`` for a row ``Operating income (1)``, ``* Restated``, ``Note: ...``. A
note read apart from its table says nothing a question about the row would find, so
the chunker keeps notes beside their table.
"""

from __future__ import annotations

import re

from ..elements.model import TableData

_MARKER = re.compile(
    r"^\s*(?:(?P<paren>\(\s*(?:\d{1,2}|[a-zA-Z]|[ivxIVX]{1,4})\s*\))"
    r"|(?P<bracket>\[\s*\d{1,2}\s*\])"
    r"|(?P<closing>\d{1,2}\))"
    r"|(?P<symbol>[*†‡§]+)"
    r"|(?P<number>\d{1,2})\.?(?=\s+[A-Z])"
    r"|(?P<note>(?:notes?|sources?)\b\s*\d*\s*(?:[:.\-–]|$)))",
    re.IGNORECASE)


def is_table_note(text: str, table: TableData) -> bool:
    """Does this paragraph, right under a table (or under another of its notes), read
    as one of the table's notes: a general ``Note:`` or a marker the table uses?"""
    match = _MARKER.match(text)
    if match is None:
        return False
    kind = match.lastgroup
    if kind == "note":
        return True
    return _cites(match, "\n".join(" | ".join(row) for row in table.rows))


def cited_rows(text: str, table: TableData, most: int = 3) -> str:
    """The labels of the rows (or columns) that cite a note's marker, ``; ``-joined."""
    match = _MARKER.match(text)
    if match is None or match.lastgroup == "note":
        return ""
    labels = [row[0] for row in table.rows[table.header_rows:] if row]
    labels += [cell for row in table.rows[:table.header_rows] for cell in row]
    found: list[str] = []
    for label in labels:
        label = label.replace("\n", " ").strip()
        if label and label not in found and _cites(match, label):
            found.append(label)
    return "; ".join(found[:most])


def _cites(match: re.Match[str], table_text: str) -> bool:
    kind = match.lastgroup or ""
    marker = match.group(kind).strip()
    if kind == "symbol":
        return marker in table_text
    core = re.escape(marker.strip("()[] "))
    if re.search(rf"[(\[]\s*{core}\s*[)\]]", table_text):
        return True  # "Operating income (1)"
    if not core.isdigit():
        return False  # a letter glued to a word is the word's ("data)"), not a mark
    # a digit set close after a word: "Accruals1" for a bare "1 ...", "profit1)" for others
    glued = (rf"(?<=[^\W\d_]|[)\]]){core}(?!\d)" if kind == "number"
             else rf"(?<=[^\W\d_]){core}\)")
    return re.search(glued, table_text) is not None
