"""Checks on parsed pages that do not trust the parser: each one recomputes what the
page says from the raw Markdown with its own code (stdlib ``html.parser``, plain
regexes) and compares."""

from __future__ import annotations

import html
import itertools
import re
from html.parser import HTMLParser

from ovisocr_loader import PageResult, ParsedDocument, chunk_document
from ovisocr_loader.elements import Element
from ovisocr_loader.elements.token_estimate import approx_tokens

WRAPPER_MARKUP = re.compile(r"</?(?:div|center|span|p)\b[^>]*>|<img\b|!\[[^\]]*\]\(",
                            re.IGNORECASE)
_FENCE_LINE = re.compile(r"^[ \t]*(?:```|~~~).*$", re.MULTILINE)
_MD_IMAGE = re.compile(r"!\[([^\]\n]*)\]\(([^)\n]*)\)")
_IMG_TAG = re.compile(r"<img\b[^<>]*>", re.IGNORECASE)
#: an image described inside its tag (``<img>a chart</img>``): a figure, not heading words
_DESCRIBED_IMAGE = re.compile(r"<img\b[^<>]*>.*?</img>", re.IGNORECASE)


#: YAML front matter opening a page (olmOCR's ``primary_language: en``): about the
#: page, not on it
FRONT_MATTER = re.compile(r"\A\s*---[ \t]*\r?\n(?:[a-z][a-z0-9_]*:.*\n)+---[ \t]*$",
                          re.MULTILINE)
#: DeepSeek-OCR's grounding markers: layout, not words
GROUNDING_MARKER = re.compile(r"<\|ref\|>[^<>]*?<\|/ref\|>[ \t]*<\|det\|>[^<>]*?<\|/det\|>"
                              r"|<\|det\|>\s*[a-z_]+\s*\[[\d,\s]*\]\s*<\|/det\|>")

#: the documented reading of inline cell markup: superscript as ^x, subscript as _x,
#: Markdown emphasis markers dropped
SCRIPT_MARKS = {"sup": "^", "sub": "_"}
#: tags that break a cell's text (a line break, or a block's bounds)
BREAKS = {"br", "p", "div", "center"}
EMPHASIS = re.compile(r"(?<!\w)(\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)\1(?!\w)")


def visible_words(markdown: str, *, fences: bool = True) -> set[str]:
    """The words a reader sees: markup, fences (unless ``fences=False``) and image
    references removed."""
    text = re.sub(r"<!--.*?-->", " ", FRONT_MATTER.sub(" ", markdown), flags=re.DOTALL)
    text = GROUNDING_MARKER.sub(" ", text)
    text = _FENCE_LINE.sub(" ", text) if fences else text
    text = _MD_IMAGE.sub(lambda m: f" {m.group(1)} ", text)
    text = re.sub(r"<sup\b[^<>]*>", "^", text, flags=re.IGNORECASE)
    text = re.sub(r"<sub\b[^<>]*>", "_", text, flags=re.IGNORECASE)
    text = re.sub(r"</?(?:sup|sub|b|i|u|em|strong)\b[^<>]*>", "", text, flags=re.IGNORECASE)
    text = re.sub(r"</?[A-Za-z!][^<>]*>", " ", text)   # a tag starts with a letter
    # a <table> tag cut off at the end of its line (output cut mid-tag) is markup too
    text = re.sub(r"<table\b[^<>\n]*$", " ", text, flags=re.IGNORECASE | re.MULTILINE)
    words = re.findall(r"\w+", html.unescape(text).replace("think", ""))
    # the subscript mark is read only inside cells: around a word it is no part of it
    return {w.strip("_") for w in words if w.strip("_")}


def lost_words(markdown: str, elements: list[Element]) -> set[str]:
    """Visible words that no element holds (as a word or inside one)."""
    covered = covered_words(elements)
    joined = " ".join(covered)
    # markup may split a word where the reader joins it (stray text in a table)
    unspaced = "".join("".join(e.text.split()) for e in elements)
    return {w for w in visible_words(markdown) - covered if w not in joined
            and re.sub(r"[_^]", "", w) not in unspaced}


def covered_words(elements: list[Element]) -> set[str]:
    parts: list[str] = []
    for e in elements:
        parts += [e.text, e.latex or "", e.equation_number or "", e.src or ""]
        if e.table is not None:
            parts += [cell for row in e.table.rows for cell in row]
    joined = " ".join(parts)   # prose keeps inline HTML as written: read it the same way
    # (a heading may start with a stray ```, no fence in an element's text)
    return set(re.findall(r"\w+", html.unescape(joined))) | visible_words(joined) | \
        visible_words(joined, fences=False)


class _Cells(HTMLParser):
    """The rows of the first top-level table as ``(text, rowspan, colspan)`` cells."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[tuple[str, int, int]]] = []
        self.depth = 0
        self.cell: list[str] | None = None
        self.spans = (1, 1)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.depth += 1
        elif self.depth == 1 and tag == "tr":
            self._close_cell()
            self.rows.append([])
        elif self.depth == 1 and tag in ("td", "th"):
            self._close_cell()
            if not self.rows:  # a cell outside any row: the parser keeps it as stray text
                return
            values = dict(attrs)
            self.cell, self.spans = [], (_int(values.get("rowspan")), _int(values.get("colspan")))
        elif tag in BREAKS and self.cell is not None:
            self.cell.append(" ")
        elif tag in SCRIPT_MARKS and self.cell is not None:
            self.cell.append(SCRIPT_MARKS[tag])

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._close_cell()
            self.depth -= 1
        elif self.depth == 1 and tag in ("td", "th", "tr"):
            self._close_cell()
        elif tag in BREAKS and self.cell is not None:
            self.cell.append(" ")

    def handle_data(self, data: str) -> None:
        if self.cell is not None and self.depth >= 1:
            self.cell.append(data)

    def _close_cell(self) -> None:
        if self.cell is not None and self.rows:
            text = EMPHASIS.sub(r"\2", "".join(self.cell))
            self.rows[-1].append((" ".join(text.split()), *self.spans))
        self.cell = None


def _int(value: str | None) -> int:
    try:
        return max(1, min(1000, int(str(value).strip().strip("\"'"))))
    except ValueError:
        return 1


def expand_spans(table_html: str) -> list[list[str]]:
    """An independent rowspan/colspan expansion (occupancy grid)."""
    reader = _Cells()
    reader.feed(table_html)
    reader.close()
    reader._close_cell()
    taken: dict[tuple[int, int], str] = {}
    written = [row for row in reader.rows if row]
    for r, row in enumerate(written):
        c = 0
        for text, rowspan, colspan in row:
            while (r, c) in taken:
                c += 1
            for dr in range(rowspan):
                for dc in range(colspan):
                    taken[(r + dr, c + dc)] = text
            c += colspan
    if not taken:
        return []
    # a rowspan past the last row adds none (HTML clamps it to the rows there are)
    height = min(1 + max(r for r, _ in taken), len(written))
    width = 1 + max(c for _, c in taken)
    return [[taken.get((r, c), "") for c in range(width)] for r in range(height)]


def check_page(markdown: str, elements: list[Element], max_tokens: int = 128) -> None:
    """Assert every invariant of one parsed page."""
    missing = lost_words(markdown, elements)
    assert not missing, f"words lost: {sorted(missing)[:20]}"
    for e in elements:
        assert 0 <= e.span[0] <= e.span[1] <= len(markdown)
    _check_tables(markdown, elements)
    _check_accounted(markdown, elements)
    _check_chunks(elements, max_tokens)


def _check_tables(markdown: str, elements: list[Element]) -> None:
    html_tables = [e for e in elements if e.table is not None
                   and markdown[e.span[0]:e.span[1]].lstrip().lower().startswith("<table")]
    assert len(html_tables) == _count_top_level_tables(markdown, elements)
    for e in elements:
        if e.table is None:
            continue
        rows = e.table.rows
        assert len({len(r) for r in rows}) <= 1, "grid is not rectangular"
        if e in html_tables and not _unclosed_nested_table(e.table.html):
            expected = expand_spans(e.table.html)
            got = [[" ".join(c.split()) for c in r] for r in rows[:len(expected)]]
            width = len(got[0]) if got else 0
            assert got == [r + [""] * (width - len(r)) for r in expected]


def _unclosed_nested_table(table_html: str) -> bool:
    """A table inside a cell left open: end tags after it mean different things to HTML
    (ignored) and to Python's parser (they close it), so the cells are not compared
    (no word of them may be lost all the same)."""
    lowered = table_html.lower()
    return lowered.count("<table") > 1 and lowered.count("<table") > lowered.count("</table")


def _count_top_level_tables(markdown: str, elements: list[Element]) -> int:
    """``<table>`` tags that are neither nested in a cell of an open table nor code (a
    blank line ends an open table's HTML block, as in CommonMark: a ``<table>`` after
    one starts a table of its own)."""
    cell = re.compile(r"<t[dh]\b[^<>]*>[ \t]*(?:\r?\n[ \t]*)?\Z", re.IGNORECASE)
    count = depth = 0
    for tag in re.finditer(r"<table\b|</table\s*>", markdown, re.IGNORECASE):
        if _inside(tag.start(), elements, ("code",)):
            continue
        if tag.group().lower().startswith("</"):
            depth = max(0, depth - 1)
        elif depth and cell.search(markdown[:tag.start()]):
            depth += 1
        else:
            count, depth = count + 1, 1
    return count


def _inside(position: int, elements: list[Element], kinds: tuple[str, ...]) -> bool:
    return any(e.kind in kinds and e.span[0] <= position < max(e.span[1], e.span[0] + 1)
               for e in elements)


def _check_accounted(markdown: str, elements: list[Element]) -> None:
    # a table never closed runs on while its lines do (a "# 1" line may be a cell's)
    unclosed = [e for e in elements if e.table is not None and e.table.truncated]
    for match in re.finditer(r"^[ \t]*(#{1,6})[ \t]+(.*)$", markdown, re.MULTILINE):
        title = _DESCRIBED_IMAGE.sub("", GROUNDING_MARKER.sub("", match.group(2)))
        words = re.findall(r"\w", re.sub(r"<[^<>]*>|!\[[^\]]*\]\([^)]*\)", "", title))
        if words and "<table" not in match.group(2).lower() and not _inside(
                match.start(1), elements, ("code",)) and not _inside(
                match.start(1), unclosed, ("table",)):
            assert _inside(match.start(1), elements, ("heading", "page_furniture")), match
    for match in re.finditer(r"^[ \t]*(\$\$|\\\[)(?!.*<table)", markdown, re.MULTILINE):
        if not _inside(match.start(1), elements, ("code", "table")):
            assert _inside(match.start(1), elements, ("formula",)), match
    for pattern in (_MD_IMAGE, _IMG_TAG):
        for match in pattern.finditer(markdown):
            if not _inside(match.start(), elements, ("code", "table", "formula")):
                assert _inside(match.start(), elements, ("figure",)), match


def _check_chunks(elements: list[Element], max_tokens: int) -> None:
    page = PageResult(page_number=1, elements=elements)
    chunks = chunk_document(ParsedDocument(source="x", pages=[page]), max_tokens)
    for chunk in chunks:
        verbatim = ("code", "table", "formula")   # kept as the model wrote them
        if not any(e.kind in verbatim for e in chunk.elements):
            assert not WRAPPER_MARKUP.search(chunk.text), chunk.text[:200]
        for e in chunk.elements:
            if e.kind not in verbatim:
                assert not WRAPPER_MARKUP.search(e.text), e.text[:200]
        if len(chunk.elements) > 1:
            assert approx_tokens(chunk.text) <= max_tokens
    for chunk, after in itertools.pairwise(chunks):
        if chunk.elements[-1].kind == "heading":   # only a heading split in two may end one
            assert after.elements[0] is chunk.elements[-1], "a heading without its text"
