"""One structure-aware chunker for every integration.

Consecutive elements are packed up to a token budget, counted on the chunk text
as emitted (separators included); a paragraph or list starts a new chunk once the
chunk is half full, so a chunk of prose holds few topics. A heading starts a new
chunk (consecutive headings share one) and never ends up without the start of the
text it heads.
Tables and formulas stay whole unless larger than the budget: then a table is
split by rows with its header lines in every part, a formula by lines and prose
by sentences. A table reads in its labelled form when that suits it and it fits
whole, else in its compact form (:mod:`.table_text`), each part under a ``Table``
line (:data:`TABLE_MARK`); every part of a table that
does not share a chunk with the sentence or caption introducing it starts with
that context. A table of a quarter of the budget or more opens a new chunk when
the chunk already holds a quarter of the budget (of at most :data:`READ_WINDOW`),
so its rows are in the opening of a chunk (where an embedding model that
truncates still reads them) rather than behind the prose, and a table that fills
half its chunk or more closes it, so what follows is not embedded with its rows (a
caption under it still joins, and so do its notes, :mod:`.table_notes`; a note with
no room beside its table opens the next chunk with the rows that cite it).
Page furniture is left out of chunk text (it stays flagged on the elements).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..document.continued_tables import parts_under_header
from ..document.report import ReportBlock, read_report
from ..elements.model import Element, TableData
from ..elements.table_text import header_lines, preferred_texts, row_lines
from ..elements.token_estimate import CJK_CHARACTERS, approx_tokens
from .table_notes import cited_rows, is_table_note

#: Tokens the smallest common embedding models read of a chunk (all-MiniLM-L6-v2: 256
#: word pieces; bge and e5 read 512). Whatever the budget, a table starts within the
#: first quarter of that, so such a model embeds its rows, not only the prose before it.
READ_WINDOW = 256


class _Page(Protocol):
    @property
    def elements(self) -> list[Element]: ...


class Pages(Protocol):
    """What the chunker reads of a document: its pages' elements, in order. A
    :class:`~ovisocr_loader.ParsedDocument` is one; the chunker needs no more of it."""

    @property
    def pages(self) -> Sequence[_Page]: ...

TokenCounter = Callable[[str], int]

#: Fits all-MiniLM-L6-v2's 256 word pieces for prose (tables of numbers can run over: pass
#: the embedding model's tokenizer for exact budgets) and leaves room in 512-token models.
DEFAULT_CHUNK_TOKENS = 256


class Chunk(BaseModel):
    """A retrievable piece of a document."""

    model_config = ConfigDict(extra="forbid")

    index: int
    text: str
    heading_path: list[str] = Field(default_factory=list)
    pages: list[int] = Field(default_factory=list)
    elements: list[Element] = Field(default_factory=list)


def element_text(element: Element) -> str:
    """How an element reads inside a chunk (tables as embedding-friendly plain text;
    a figure by its alt text when that says something, two words or more)."""
    if element.kind == "heading":
        return "#" * (element.level or 1) + " " + element.text
    if element.kind == "figure":
        return element.text if len(element.text.split()) >= 2 else ""
    return element.text


def table_context(previous: Element | None) -> str:
    """What introduces a table: the caption or heading right before it, or the
    paragraph right before it (its last sentence when the paragraph is long)."""
    if previous is None or previous.kind not in ("caption", "heading", "paragraph"):
        return ""
    text = previous.text.strip()
    if previous.kind != "paragraph" or len(text.split()) <= _CONTEXT_WORDS:
        return text
    last = _SENTENCE_START.split(text)[-1]
    return last if len(last.split()) <= _CONTEXT_WORDS else ""


HeadingPath = list[tuple[int, str]]


def enter_heading(path: HeadingPath, heading: Element) -> None:
    """Update ``(level, text)`` pairs in place: a heading closes its level and deeper ones."""
    level = heading.level or 1
    while path and path[-1][0] >= level:
        path.pop()
    path.append((level, heading.text))


def chunk_document(doc: Pages, max_tokens: int = DEFAULT_CHUNK_TOKENS, *,
                   count_tokens: TokenCounter = approx_tokens,
                   include_furniture: bool = False,
                   page_breaks: bool = False) -> list[Chunk]:
    """Split a parsed document into chunks of at most ``max_tokens``, separators included.

    Only an element larger than the budget on its own makes a larger chunk, and it
    is split first (a table by rows with its header in every part, prose by
    sentences, a formula by lines); a formula line or a word longer than the budget
    is the one thing that can still exceed it. A heading always shares its chunk
    with the start of the text it heads. The pages are read as one report
    (:func:`~ovisocr_loader.document.read_report`): a table continued on the next
    page is one table, its header over the rows of both pages, and a paragraph cut
    by the break is whole; a chunk lists every page it draws on. ``page_breaks=True``
    reads each page alone and ends a chunk at every page boundary (the heading path
    carries on), so each chunk cites exactly one page.
    """
    if max_tokens < 16:
        raise ValueError("max_tokens must be at least 16")
    packer = _Packer(max_tokens, count_tokens)
    if page_breaks:
        for page in doc.pages:
            packer.flush()
            packer.add_all(read_report([page.elements]), include_furniture)
    else:
        packer.add_all(read_report([page.elements for page in doc.pages]), include_furniture)
    packer.flush()
    return packer.chunks


SEPARATOR = "\n\n"
#: The line that opens every part of a table in a chunk: it tells a reader (an LLM, an
#: embedding model) that the sentences under it are a table's values, not prose
#: (measured: dense hit@5 +0.012, table questions +0.019 to +0.026 at 256, text questions
#: +0.005 to +0.010 at both budgets, table questions -0.007 at 512; docs/benchmarks.md).
TABLE_MARK = "Table\n"
_CONTEXT_WORDS = 60
#: a sentence ends at . ! ? before a capital or a digit ("U.S. dollars" stays whole)
_SENTENCE_START = re.compile(r"(?<=[.!?])\s+(?=[\"“‘(\[]?[A-Z0-9])|(?<=[。！？])")
_LINES = re.compile(r"\n+")
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])")
_WORDS = re.compile(r"\s+")
#: after a CJK character: CJK prose has no spaces, a long sentence splits between characters
_AFTER_CJK = re.compile(f"(?<=[{CJK_CHARACTERS}])")
_CJK_OR_RUN = re.compile(f"[{CJK_CHARACTERS}]|[^{CJK_CHARACTERS}]+")
#: between any two characters: the last resort to keep a heading with its text
_ANYWHERE = re.compile(r"(?<=\S)(?=\S)")


class _Packer:
    """Packs element pieces into chunks under a token budget, separators counted."""

    def __init__(self, max_tokens: int, count: TokenCounter) -> None:
        self.max_tokens = max_tokens
        self.count = count
        self.path: HeadingPath = []
        self.parts: list[tuple[Element, str, list[str]]] = []
        self.chunks: list[Chunk] = []
        self.previous: Element | None = None
        self.closing = False
        self.table: tuple[Element, TableData] | None = None  # while its notes may follow
        self.made_of: dict[int, tuple[Element, ...]] = {}  # a joined block's page elements

    def add_all(self, blocks: list[ReportBlock], include_furniture: bool) -> None:
        for block in blocks:
            if block.element.kind == "page_furniture" and not include_furniture:
                continue
            if len(block.parts) > 1:
                self.made_of[id(block.element)] = block.parts
            self.add(block.element)

    def add(self, element: Element) -> None:
        note = self._is_note(element)
        joins_table = self.closing and element.kind == "caption"
        if self.closing and not joins_table and not note:
            self.flush()  # a table closes its chunk (a caption or a note under it joins)
        self.closing = joins_table or (note and self.closing)
        if element.kind == "heading":
            if self._holds_body():
                self.flush()  # consecutive headings stay together with the text they head
            enter_heading(self.path, element)
        if not note and self._half_full_before(element):
            self.flush()
        if element.kind == "table" and element.table is not None:
            self._add_table(element, element.table)
        elif note and self.table is not None:
            self._add_note(element, *self.table)
        else:
            for piece in _pieces(element, self.max_tokens, self.count):
                self.place(element, piece)
        if not note and element.kind not in ("table", "caption"):
            self.table = None
        self.previous = element

    def _is_note(self, element: Element) -> bool:
        """A paragraph right under a table (or under its notes) that explains it."""
        return (element.kind in ("paragraph", "list") and self.table is not None
                and is_table_note(element.text, self.table[1]))

    def _add_note(self, note: Element, table_element: Element, table: TableData) -> None:
        """Place a table's note; in a chunk without its table, the labels of the rows that
        cite it go first (``Acquisition of Commercialization Rights (1)``)."""
        context = cited_rows(note.text, table)
        for piece in _pieces(note, self.max_tokens, self.count):
            beside = any(e is table_element for e, _, _ in self.parts)
            if context and not (beside and self.fits(self.texts(), piece)):
                labelled = f"{context}\n{piece}"
                if self.count(labelled) <= self.max_tokens:
                    piece = labelled
            self.place(note, piece)

    def _half_full_before(self, element: Element) -> bool:
        """A paragraph or list starts a new chunk once the chunk is half full, so prose
        chunks hold fewer topics (measured: text questions +0.02 at 512, where an
        embedding model reading 256 word pieces misses the rest of a full chunk)."""
        return (element.kind in ("paragraph", "list") and bool(self.parts)
                and self.parts[-1][0].kind != "heading"
                and self._cost(self.parts) >= self.max_tokens // 2)

    def _add_table(self, element: Element, table: TableData) -> None:
        """Place a table's parts, each with the table's context unless it shares a
        chunk with the element that gives it; a chunk the table fills to half the
        budget or more is closed (measured: dense retrieval gains, BM25 keeps)."""
        same_page = self.previous is not None and \
            self.previous.page_number == element.page_number
        source = self.previous if same_page else None
        context = table_context(source)
        budget = self.max_tokens - self.count(context + "\n") if context else self.max_tokens
        if budget < self.max_tokens // 2:  # a context too long to repeat: leave it out
            context, budget = "", self.max_tokens
        self.table = (element, table)
        pieces = self._table_pieces(element, table, budget - self.count(TABLE_MARK))
        if not pieces:   # no text (a reference to a table kept elsewhere): no mark here
            return
        if self._opens_chunk(TABLE_MARK + pieces[0][1]):
            self.flush()
        for owner, text in pieces:
            piece = TABLE_MARK + text
            beside = any(e is source for e, _, _ in self.parts)
            if context and not (beside and self.fits(self.texts(), piece)):
                piece = f"{context}\n{piece}"
            self.place(owner, piece)
        self.closing = self._cost(self.parts) >= self.max_tokens // 2

    def _table_pieces(self, element: Element, table: TableData, budget: int
                      ) -> list[tuple[Element, str]]:
        """The table's pieces, each with the element it cites: a table joined over a page
        break that must be split is split at the break first, each page's rows under
        the whole table's header, so that a chunk cites the pages of the rows it holds."""
        whole = table_pieces(table, budget, self.count)
        parts = self.made_of.get(id(element))
        if len(whole) <= 1 or parts is None:
            return [(element, piece) for piece in whole]
        tables = parts_under_header([part.table or TableData(rows=[], html="")
                                     for part in parts])
        return [(part, piece) for part, rows in zip(parts, tables, strict=True)
                for piece in self._part_pieces(rows, budget)]

    def _part_pieces(self, part: TableData, budget: int) -> list[str]:
        """A part of a joined table: whole if it fits, else split by rows in the labelled
        form when that suits the table (each row a sentence with its column labels)."""
        texts = list(preferred_texts(part.rows, part.header_rows))
        if self.count(texts[0]) <= budget or len(texts) == 1:
            return table_pieces(part, budget, self.count)
        return split_table(part, budget, self.count, compact=False)

    def _opens_chunk(self, table_piece: str) -> bool:
        """A table of a quarter of the budget or more after a quarter of the budget of
        other text starts a chunk, the budget counted up to :data:`READ_WINDOW`
        (measured: dense hit@5 +0.01 at 256; at 512 +0.01 with a quarter of 512, +0.03
        with a quarter of 256)."""
        quarter = min(self.max_tokens, READ_WINDOW) // 4
        return (self._holds_body() and self.count(table_piece) >= quarter
                and self._cost(self.parts) >= quarter)

    def fits(self, parts: list[str], piece: str) -> bool:
        texts = [t for t in [*parts, piece] if t.strip()]
        return self.count(SEPARATOR.join(texts)) <= self.max_tokens

    def texts(self) -> list[str]:
        return [text for _, text, _ in self.parts]

    def place(self, element: Element, piece: str) -> None:
        if not self.parts or self.fits(self.texts(), piece):
            self._append(element, piece)
        elif self.parts[-1][0].kind == "heading":   # a heading never ends a chunk alone
            self._place_after_heading(element, piece)
        else:
            self.flush()
            self._append(element, piece)

    def _place_after_heading(self, element: Element, piece: str) -> None:
        """Put the start of ``piece`` in the heading's chunk; if nothing fits beside what
        the chunk holds, carry the heading(s) over to a new chunk (a heading that fills
        most of the budget is split, and its last words go over)."""
        split = self._fit_prefix(element, piece)
        if split is None:
            carry = self._carry_headings()
            self.flush()
            self.parts = carry
            split = self._fit_prefix(element, piece) or self._fit_prefix(element, piece, True)
        if split is None:  # only a heading filling the budget can leave no room at all
            self._append(element, piece)
            return
        head, rest = split
        self._append(element, head)
        self.flush()
        for part in _pieces_of_text(element, rest, self.max_tokens, self.count):
            self.place(element, part)

    def _carry_headings(self) -> list[tuple[Element, str, list[str]]]:
        """Take the trailing headings (at most half the budget of them) off the parts; a
        heading that has to stay behind sends its last words along, so that no chunk
        ends with a heading whose text is elsewhere."""
        run: list[tuple[Element, str, list[str]]] = []
        while self.parts and self.parts[-1][0].kind == "heading":
            run.insert(0, self.parts.pop())
        while len(run) > 1 and self._cost(run) > self.max_tokens // 2:
            self.parts.append(run.pop(0))
        if self._cost(run) > self.max_tokens // 2:
            return [self._split_off_tail(run[0])]
        if self.parts and self.parts[-1][0].kind == "heading":
            run.insert(0, self._split_off_tail(self.parts.pop()))
        return run

    def _split_off_tail(self, part: tuple[Element, str, list[str]]
                        ) -> tuple[Element, str, list[str]]:
        """Leave the head of a heading in the parts and return its last words (up to a
        quarter of the budget, at least one)."""
        element, text, path = part
        words = text.split(" ")
        keep = max(1, len(words) - max(1, len(words) // 4))
        while keep > 1 and self.count(" ".join(words[keep:])) <= self.max_tokens // 4:
            keep -= 1
        self.parts.append((element, " ".join(words[:keep]), path))
        return (element, " ".join(words[keep:]), path)

    def _holds_body(self) -> bool:
        """Does the chunk being built hold anything but headings?"""
        return any(e.kind != "heading" for e, _, _ in self.parts)

    def _cost(self, parts: list[tuple[Element, str, list[str]]]) -> int:
        return self.count(SEPARATOR.join(t for _, t, _ in parts))

    def _fit_prefix(self, element: Element, text: str, last_resort: bool = False
                    ) -> tuple[str, str] | None:
        """The longest head of ``text`` (at the coarsest boundary that works) that fits
        beside the current parts, and the rest; None if not even one unit fits.
        ``last_resort`` cuts prose at words, else anywhere (a run without spaces)."""
        levels = [_LINES] if element.kind in ("table", "formula") else [
            _LINES, _SENTENCES, _WORDS, _AFTER_CJK]
        if last_resort:
            levels = [_WORDS, _AFTER_CJK, _ANYWHERE]
        current = self.texts()
        for pattern in levels:
            cuts = [m.start() for m in pattern.finditer(text) if m.start() > 0]
            low, high, best = 0, len(cuts) - 1, -1
            while low <= high:  # the fit shrinks monotonically with the cut: bisect it
                middle = (low + high) // 2
                if self.fits(current, text[:cuts[middle]].rstrip()):
                    best, low = middle, middle + 1
                else:
                    high = middle - 1
            if best >= 0:
                cut = cuts[best]
                return text[:cut].rstrip(), text[cut:].strip()
        return None

    def _append(self, element: Element, text: str) -> None:
        self.parts.append((element, text, [h for _, h in self.path]))

    def flush(self) -> None:
        parts = self.parts
        self.parts = []
        if not parts or not any(text.strip() or e.kind == "figure" for e, text, _ in parts):
            return
        elements = list({id(e): e for part, _, _ in parts
                         for e in self.made_of.get(id(part), (part,))}.values())
        text = SEPARATOR.join(t for _, t, _ in parts if t.strip())
        pages = sorted({e.page_number for e in elements})
        self.chunks.append(Chunk(index=len(self.chunks), text=text, heading_path=parts[-1][2],
                                 pages=pages, elements=elements))


def _pieces(element: Element, max_tokens: int, count: TokenCounter) -> list[str]:
    """An element's chunk text, split when larger than the budget."""
    text = element_text(element)
    if count(text) <= max_tokens:
        return [text]
    return _pieces_of_text(element, text, max_tokens, count)


def table_pieces(table: TableData, max_tokens: int, count: TokenCounter) -> list[str]:
    """A table whole in its labelled form if that suits it and fits the budget, else
    whole in its compact form, else split by rows (compact, header lines in every part)."""
    for text in preferred_texts(table.rows, table.header_rows):
        if count(text) <= max_tokens:
            return [text] if text else []
    return split_table(table, max_tokens, count)


def _pieces_of_text(element: Element, text: str, budget: int, count: TokenCounter
                    ) -> list[str]:
    if count(text) <= budget:
        return [text] if text else []
    if element.kind in ("table", "formula"):
        return _pack_units(text.split("\n"), budget, count, "\n")
    return _split_prose(text, budget, count)


def split_table(table: TableData, max_tokens: int, count: TokenCounter, *,
                compact: bool = True) -> list[str]:
    """Split an oversized table by rows (compact form, unless told), its header lines at
    the top of every part; a header too large to repeat is kept once, at the start."""
    head = header_lines(table.rows, table.header_rows)
    rows = row_lines(table.rows, table.header_rows, compact=compact)
    room = max_tokens - count("\n".join(head)) - 1 if head else max_tokens
    if room < max_tokens // 2:
        return _pack_units([*head, *rows], max_tokens, count, "\n")
    return ["\n".join([*head, part]) for part in _pack_units(rows, room, count, "\n")]


def _pack_units(units: list[str], budget: int, count: TokenCounter, joiner: str) -> list[str]:
    """Greedy packing of whole units (rows, lines); a unit larger than the budget alone."""
    parts: list[str] = []
    buffer: list[str] = []
    for unit in units:
        if buffer and count(joiner.join([*buffer, unit])) > budget:
            parts.append(joiner.join(buffer))
            buffer = []
        buffer.append(unit)
    if buffer:
        parts.append(joiner.join(buffer))
    return [p for p in parts if p.strip()]


def _split_sentence(sentence: str, max_tokens: int, count: TokenCounter) -> list[str]:
    """A sentence larger than the budget, at spaces; a run without spaces (CJK prose)
    still larger, between its CJK characters (a number or Latin word in it stays whole)."""
    pieces: list[str] = []
    for part in _pack_units(sentence.split(" "), max_tokens, count, " "):
        if count(part) > max_tokens:  # without CJK characters it stays one unit, whole
            pieces.extend(_pack_units(_CJK_OR_RUN.findall(part), max_tokens, count, ""))
        else:
            pieces.append(part)
    return pieces


def _split_prose(text: str, max_tokens: int, count: TokenCounter) -> list[str]:
    """Split long prose at line, then sentence, then word boundaries (CJK: characters)."""
    units = [u for u in re.split(r"(?<=\n)|(?<=[.!?])\s+|(?<=[。！？])", text) if u and u.strip()]
    pieces: list[str] = []
    buffer = ""
    for unit in units:
        unit = unit.strip()
        if count(unit) > max_tokens:
            if buffer:
                pieces.append(buffer)
                buffer = ""
            pieces.extend(_split_sentence(unit, max_tokens, count))
            continue
        joined = f"{buffer} {unit}" if buffer else unit
        if buffer and count(joined) > max_tokens:
            pieces.append(buffer)
            buffer = unit
        else:
            buffer = joined
    if buffer:
        pieces.append(buffer)
    return pieces
