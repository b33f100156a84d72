"""TAT-QA contexts laid out as multi-page reports, the way print paginates them.

A report is a few consecutive contexts of one half of the set (each context: its
paragraphs up to the one introducing the table, the table, the other paragraphs,
as ``retrieval_set.page_markdown`` orders them) poured into pages of a fixed
height in lines. Every page carries the report's running furniture (a layout of
``LAYOUTS``: a header line and a page number, a footer line with the number, or
both). What does not fit goes on the next page as print sets it:
- a table is cut between rows; its next part repeats the header rows in about a
  third of the cases (``REPEAT_HEADER``), else starts with the next row;
- a paragraph is cut between words; in some cases the last word on the page is
  hyphenated (``conti-`` / ``nued``). Only cuts inside a sentence count as broken
  paragraphs (a cut after a sentence's end or before a bullet looks like a
  paragraph's end on the page, to any reader).
The tables are written in one of the ``TABLE_STYLES`` per report (plain ``<td>``
headers with colspans, ``<th>`` in a ``<thead>``, pipe tables).

A question counts as one on a table's continuation when one of its targets stands
in the rows that went to the next page. The two halves of the set (contexts at
even and at odd positions) make separate reports: tune on one, report the other.
"""

from __future__ import annotations

import json
import math
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

from retrieval_set import (
    _INTRO,
    HALVES,
    TABLE_STYLES,
    Question,
    covers,
    half_of,
    header_row_count,
    targets,
)

WORDS_PER_LINE = 14
#: share of continued tables whose next part repeats the header rows
REPEAT_HEADER = 0.35
HYPHENATE = 0.2
_SENTENCE_END = re.compile(r"[.!?:;][\"'’”)\]]*$")
_BULLETS = ("•", "-", "*", "–", "·")


@dataclass(frozen=True)
class Layout:
    """A report's running furniture: what stands above and below the text."""

    name: str
    top: str          # "" or a template with {company}, {year}, {page}
    bottom: str
    lines: int        # the page's height in lines of text


LAYOUTS = (
    Layout("header + number", "{company} | Annual Report {year}", "{page}", 34),
    Layout("footer with number", "", "{company} Annual Report {year} | Page {page}", 38),
    Layout("number over header", "{page}\n\n{company}", "{year} Annual Report", 30),
)
COMPANIES = ("Northwind Holdings", "Contoso Group", "Fabrikam Inc.", "Litware plc",
             "Tailspin Industries", "Proseware Corp", "Adatum Limited", "Woodgrove AG")


@dataclass
class ContinuedTable:
    """A table cut by a page break: the rows that went on, and the labels of its columns."""

    rows: list[list[str]]
    column_labels: list[str]


@dataclass
class BrokenParagraph:
    """A paragraph cut by a page break: the words either side of the cut."""

    before: str
    after: str
    page: int         # the page it starts on


@dataclass
class Report:
    file_name: str
    layout: str
    markdown: list[str]       # one per page
    furniture_lines: list[str]
    questions: list[Question] = field(default_factory=list)
    continuation: set[str] = field(default_factory=set)   # question uids
    continued_tables: list[ContinuedTable] = field(default_factory=list)
    broken_paragraphs: list[BrokenParagraph] = field(default_factory=list)


def load_reports(path: Path, half: str | None = None, seed: int = 0,
                 per_report: tuple[int, int] = (3, 5)) -> list[Report]:
    """The set's contexts as reports: all, or those of one half (``"a"``: contexts at
    even positions, ``"b"``: odd)."""
    contexts = json.loads(path.read_text(encoding="utf-8"))
    rng = random.Random(seed)
    halves = [h for h in HALVES if half in (None, h)]
    reports: list[Report] = []
    for name in halves:
        chosen = half_of(contexts, name)
        start = 0
        while start < len(chosen):
            count = rng.randint(*per_report)
            group = chosen[start:start + count]
            start += count
            reports.append(_report(group, f"{name}_{len(reports) + 1:04d}.pdf", rng))
    return reports


def _report(contexts: list[dict], file_name: str, rng: random.Random) -> Report:
    layout = LAYOUTS[rng.randrange(len(LAYOUTS))]
    style = rng.choice(("td", "td", "th", "pipe"))
    values = {"company": rng.choice(COMPANIES), "year": rng.choice(("2019", "2020"))}
    pager = _Pager(layout, values, rng, style)
    for context in contexts:
        pager.context(context)
    report = pager.finish(file_name)
    for context in contexts:
        _add_questions(report, context, pager)
    return report


class _Pager:
    """Pours blocks into pages of ``layout.lines`` lines, cutting what does not fit."""

    def __init__(self, layout: Layout, values: dict[str, str], rng: random.Random,
                 style: str) -> None:
        self.layout, self.values, self.rng, self.style = layout, values, rng, style
        self.pages: list[list[str]] = [[]]
        self.used = 0
        self.continued: list[ContinuedTable] = []
        self.broken: list[BrokenParagraph] = []
        self.continued_text: dict[int, str] = {}   # id(context) -> its continued rows' text

    def context(self, context: dict) -> None:
        paragraphs = [p["text"].strip() for p in sorted(context["paragraphs"],
                                                        key=lambda p: p["order"])]
        paragraphs = [p for p in paragraphs if p]
        intro = [i for i, p in enumerate(paragraphs) if _INTRO.search(p)]
        split = intro[-1] + 1 if intro else min(1, len(paragraphs))
        for text in paragraphs[:split]:
            self.paragraph(text)
        self.table(context["table"]["table"], id(context))
        for text in paragraphs[split:]:
            self.paragraph(text)

    def room(self) -> int:
        return self.layout.lines - self.used

    def new_page(self) -> None:
        self.pages.append([])
        self.used = 0

    def put(self, block: str, lines: int) -> None:
        self.pages[-1].append(block)
        self.used += lines

    def paragraph(self, text: str) -> None:
        words = text.split()
        needed = math.ceil(len(words) / WORDS_PER_LINE)
        if needed <= self.room():
            self.put(text, needed)
            return
        if self.room() < 2:
            self.new_page()
            self.paragraph(text)
            return
        cut = self.room() * WORDS_PER_LINE
        head, tail = words[:cut], words[cut:]
        if self.rng.random() < HYPHENATE and len(tail[0]) >= 8 and tail[0].isalpha():
            word = tail[0]
            head, tail = [*head, word[:len(word) // 2] + "-"], [word[len(word) // 2:], *tail[1:]]
        self.put(" ".join(head), self.room())
        if _mid_sentence(head[-1], tail[0]):
            self.broken.append(BrokenParagraph(" ".join(head[-6:]), " ".join(tail[:6]),
                                               len(self.pages)))
        self.new_page()
        self.paragraph(" ".join(tail))

    def table(self, grid: list[list[str]], key: int) -> None:
        header = grid[:header_row_count(grid)]
        body = grid[len(header):]
        needed = len(grid) + 1
        if needed <= self.room():
            self.put(self._write(grid), needed)
            return
        fits = self.room() - len(header) - 1
        if fits < 2 or len(body) < 3:
            self.new_page()
            self.put(self._write(grid), needed)
            return
        fits = min(fits, len(body) - 1)
        self.put(self._write([*header, *body[:fits]]), self.room())
        rest = body[fits:]
        self.continued.append(ContinuedTable(rest, _column_labels(header)))
        self.continued_text[key] = "\n".join(" ".join(row) for row in rest)
        self.new_page()
        repeat = self.rng.random() < REPEAT_HEADER
        part = [*header, *rest] if repeat else rest
        self.put(self._write(part), len(part) + 1)

    def _write(self, grid: list[list[str]]) -> str:
        return TABLE_STYLES[self.style](grid)

    def finish(self, file_name: str) -> Report:
        pages = [p for p in self.pages if p]
        texts, furniture = [], set()
        for number, blocks in enumerate(pages, 1):
            top = self.layout.top.format(page=number, **self.values)
            bottom = self.layout.bottom.format(page=number, **self.values)
            furniture.update(line for line in [*top.split("\n\n"), bottom] if line)
            texts.append("\n\n".join(b for b in [top, *blocks, bottom] if b) + "\n")
        return Report(file_name, self.layout.name, texts,
                      sorted(f for f in furniture if not f.isdigit()),
                      continued_tables=self.continued, broken_paragraphs=self.broken)


def _mid_sentence(last: str, first: str) -> bool:
    """Whether a cut between these words breaks a sentence (a cut after a sentence's
    end, or before a bullet, leaves nothing on either page that a reader could tell
    from a paragraph's end: the issue's broken paragraphs are cut mid-sentence)."""
    return not _SENTENCE_END.search(last) and first not in _BULLETS


def _column_labels(header: list[list[str]]) -> list[str]:
    """The labels of the value columns: the cells of the header row naming the most
    columns (the lowest of those: years under a spanned label)."""
    named = [[c.strip() for c in row[1:] if c.strip()] for row in header]
    return max(reversed(named), key=len, default=[])


def _add_questions(report: Report, context: dict, pager: _Pager) -> None:
    grid = context["table"]["table"]
    paragraphs = [p["text"] for p in context["paragraphs"]]
    visible = "\n".join([*paragraphs, *(c for row in grid for c in row)])
    continued = pager.continued_text.get(id(context), "")
    for q in context["questions"]:
        question = Question(q["uid"], q["question"], q["answer_from"], q["answer_type"],
                            targets(q))
        if not question.targets or not covers(visible, question.targets):
            continue
        report.questions.append(question)
        if continued and any(covers(continued, [t]) for t in question.targets):
            report.continuation.add(question.uid)
