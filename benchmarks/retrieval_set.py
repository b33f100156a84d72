"""TAT-QA contexts as scanned pages, and what makes a retrieved chunk a hit.

Each context (one table from a financial report and its paragraphs) becomes one
page of Markdown as a document VLM writes it: the paragraphs up to the one that
introduces the table ("... as follows:"), the table as HTML whose header rows are
plain ``<td>`` rows (no ``<thead>``, no ``<th>``) with ``colspan`` over the cells
TAT-QA leaves empty for a merged label, then the remaining paragraphs.

A question's targets are its answer strings (span, multi-span), the items of its
derivation (count) or the numbers of its derivation other than constants
(arithmetic). A set of chunks covers a question when their text holds every
target (case-folded, white space collapsed, thousands separators ignored, a
number never matched inside a longer number).

Other models write tables otherwise (``TABLE_STYLES``): header rows as ``<th>`` in a
``<thead>``, or a Markdown pipe table, which has no spans (the first header row above
the delimiter, the others below it, a spanned label in its first cell or repeated
over every cell it spans, as docling writes it). The same questions over pages in
another style check that the chunks' advantage is not the fit to one way of writing.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "retrieval" / \
    "tatqa_test_gold.json"

_INTRO = re.compile(r"(?::\s*$|as follows|following table|table below|summarized below"
                    r"|presented below|set forth below|shown below)", re.IGNORECASE)
_VALUE = re.compile(r"^[\s(]*[-+]?\s*[$€£¥]?\s*[\d,.]*\d[\d,.]*\s*(?:%|[a-z]{0,3})?[\s)]*%?$",
                    re.IGNORECASE)
_YEAR = re.compile(r"^\s*(?:19|20)\d\d\s*$")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
#: the set's two halves: "a" (contexts at even positions) to tune on, "b" (odd) to
#: report apart
HALVES = ("a", "b")


@dataclass
class Question:
    uid: str
    text: str
    source: str            # table, text or table-text
    answer_type: str
    targets: list[str]


@dataclass
class Page:
    """One context as a page: its Markdown, the text it shows, and its questions."""

    uid: str
    file_name: str
    markdown: str
    visible: str
    questions: list[Question] = field(default_factory=list)


def half_of(contexts: list[dict], half: str | None) -> list[dict]:
    """All contexts, or those of one of ``HALVES``."""
    return contexts if half is None else contexts[HALVES.index(half)::2]


def load_pages(path: Path, limit: int | None = None, style: str = "td",
               half: str | None = None) -> list[Page]:
    """Every context of a TAT-QA file (or of one half) as a page with its findable
    questions, its table written in ``style`` (one of ``TABLE_STYLES``)."""
    contexts = half_of(json.loads(path.read_text(encoding="utf-8")), half)
    pages = []
    for number, context in enumerate(contexts[:limit], 1):
        grid = context["table"]["table"]
        paragraphs = [p["text"] for p in sorted(context["paragraphs"],
                                                key=lambda p: p["order"])]
        page = Page(uid=context["table"]["uid"], file_name=f"report_{number:04d}.pdf",
                    markdown=page_markdown(grid, paragraphs, style),
                    visible="\n".join([*paragraphs, *(c for row in grid for c in row)]))
        for q in context["questions"]:
            question = Question(q["uid"], q["question"], q["answer_from"], q["answer_type"],
                                targets(q))
            if question.targets and covers(page.visible, question.targets):
                page.questions.append(question)
        pages.append(page)
    return pages


def page_markdown(grid: list[list[str]], paragraphs: list[str], style: str = "td") -> str:
    """Paragraphs up to the table's introduction, the table, the other paragraphs."""
    intro = [i for i, p in enumerate(paragraphs) if _INTRO.search(p)]
    split = intro[-1] + 1 if intro else min(1, len(paragraphs))
    blocks = [*paragraphs[:split], TABLE_STYLES[style](grid), *paragraphs[split:]]
    return "\n\n".join(b.strip() for b in blocks if b.strip()) + "\n"


def header_row_count(grid: list[list[str]]) -> int:
    """Leading rows holding no values (years and dates are labels), and more than
    a row label alone."""
    count = 0
    for row in grid:
        values = [c for c in row[1:] if c.strip()]
        if not values or any(_VALUE.match(c) and not _YEAR.match(c) for c in values):
            break
        count += 1
    return count


def table_html(grid: list[list[str]], tag: str = "td") -> str:
    """The grid as a VLM writes it: header rows as plain cells with colspans (with
    ``tag="th"``: as ``<th>`` cells in a ``<thead>``)."""
    header = header_row_count(grid)
    rows = []
    for index, row in enumerate(grid):
        cell = tag if index < header else "td"
        cells = _spanned(row) if index < header else [(c, 1) for c in row]
        rows.append("<tr>" + "".join(
            f"<{cell} colspan=\"{span}\">{html.escape(text)}</{cell}>" if span > 1 else
            f"<{cell}>{html.escape(text)}</{cell}>" for text, span in cells) + "</tr>")
    if tag == "td" or not header:
        return "<table>" + "".join(rows) + "</table>"
    return (f"<table><thead>{''.join(rows[:header])}</thead>"
            f"<tbody>{''.join(rows[header:])}</tbody></table>")


def pipe_table(grid: list[list[str]], repeat_spans: bool = False) -> str:
    """The grid as a GFM pipe table: no spans, so a spanned header label stands in its
    first cell (``repeat_spans``: in every cell it spans); the delimiter under the first
    row, as GFM allows one header row."""
    header = header_row_count(grid)
    lines = []
    for index, row in enumerate(grid):
        cells = row
        if index < header:
            cells = [text if repeat_spans or not n else ""
                     for text, span in _spanned(row) for n in range(span)]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ")
                                        for c in cells) + " |")
        if index == 0:
            lines.append("|" + "---|" * len(row))
    return "\n".join(lines)


def _spanned(row: list[str]) -> list[tuple[str, int]]:
    """A header row's cells with spans: a label spreads over the empty cells beside it,
    centred when it has empty cells on both sides (the stub column never joins)."""
    width = len(row)
    owner: list[int | None] = [None] * width
    for col, text in enumerate(row):
        if not text.strip() or col == 0:
            continue
        right = col
        while right + 1 < width and not row[right + 1].strip():
            right += 1
        left = col
        while left - 1 >= 1 and not row[left - 1].strip() and owner[left - 1] is None:
            left -= 1
        if left < col and right > col:  # centred: as far left as right
            reach = min(col - left, right - col)
            left, right = col - reach, col + reach
        elif left < col:
            left = col
        for position in range(left, right + 1):
            owner[position] = col
    cells: list[tuple[str, int]] = []
    col = 0
    while col < width:
        label = owner[col]
        if label is None:
            cells.append((row[col], 1))
            col += 1
            continue
        end = col
        while end + 1 < width and owner[end + 1] == label:
            end += 1
        cells.append((row[label], end - col + 1))
        col = end + 1
    return cells


#: how a page writes its table: the issue's plain ``<td>`` header rows first
TABLE_STYLES: dict[str, Callable[[list[list[str]]], str]] = {
    "td": table_html,
    "th": partial(table_html, tag="th"),
    "pipe": pipe_table,
    "pipe-repeated": partial(pipe_table, repeat_spans=True),
}


def targets(question: dict[str, object]) -> list[str]:
    """What retrieved text must hold for the question to be answerable."""
    kind = question["answer_type"]
    derivation = str(question.get("derivation") or "")
    if kind == "arithmetic":
        constants = {str(c) for c in question.get("consts") or []}  # type: ignore[attr-defined]
        return [n for n in _NUMBER.findall(derivation) if n not in constants]
    if kind == "count" and derivation:
        return [item.strip() for item in derivation.split("##") if item.strip()]
    answer = question["answer"]
    answers = answer if isinstance(answer, list) else [answer]
    return [str(a).strip() for a in answers if str(a).strip()]


def normalise(text: str) -> str:
    """Case-folded, spaces collapsed, thousands separators dropped."""
    text = re.sub(r"(?<=\d),(?=\d{3})", "", text.casefold())
    return re.sub(r"\s+", " ", text)


def covers(text: str, wanted: list[str]) -> bool:
    """Does ``text`` hold every target (a number not inside a longer number)?"""
    haystack = normalise(text)
    for target in wanted:
        needle = normalise(target)
        if _NUMBER.fullmatch(needle):
            if not re.search(rf"(?<![\d.]){re.escape(needle)}(?!\.?\d)", haystack):
                return False
        elif needle not in haystack:
            return False
    return True
