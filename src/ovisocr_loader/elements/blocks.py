"""Normalised page Markdown into raw blocks: ``(kind, start, end)`` spans in order.

Every non-blank character outside ``<think>`` marker lines falls in exactly one
block, so no text is lost. Blocks:

- ``table``: ``<table>`` to its matching ``</table>``; a table left open (output cut
  off) ends where table markup stops, at the first following block that does not
  start with a table tag;
- ``pipe_table``: a GFM pipe table (a row over a delimiter row), or two or more
  consecutive ``| ... |`` rows;
- ``formula``: ``$$...$$``, ``\\[...\\]`` or a ``\\begin{equation}``-style
  environment, with an equation number standing alone after it (blank lines allowed);
- ``code``: a fenced block that normalisation kept as code;
- ``heading`` (``#`` or setext: text over a line of ``=`` or ``-``), ``list``,
  ``paragraph``; ``image_line``: a line that starts with an
  image reference (split into figures and text later; a described ``<img>...</img>``
  to the line it closes on);
- ``drawing`` (:mod:`.drawings`): ``<svg>`` to ``</svg>``, ``<description>`` to
  ``</description>``, or a paragraph of bare SVG elements.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Literal

from .drawings import DRAWING_OPEN, drawing_close
from .figures import IMAGE_REF
from .latex_tables import LATEX_TABLE_OPEN
from .tables import is_delimiter_row

BlockKind = Literal["table", "pipe_table", "latex_table", "otsl_table", "formula", "code",
                    "heading", "list", "paragraph", "image_line", "drawing"]

HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$")
#: the line under a setext heading: ``===`` (level 1) or ``---`` (level 2)
SETEXT_UNDERLINE = re.compile(r"^[ \t]{0,3}(={2,}|-{2,})[ \t]*$")
LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+•]|\d{1,3}[.)])[ \t]+\S")
EQUATION_NUMBER = re.compile(r"^[ \t]*[(\[]([\w.\-']{1,12})[)\]][ \t]*$")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_THINK = re.compile(r"^[ \t]*</?think>[ \t]*$")
_TABLE_TAG = re.compile(r"<table\b|</table\s*>", re.IGNORECASE)
_TABLE_OPEN = re.compile(r"<table\b", re.IGNORECASE)
#: a DocTags table (:mod:`.otsl`), which a DocTags page's rewrite puts at a line start
OTSL_OPEN = re.compile(r"<otsl>")
#: what stands right before a ``<table>`` nested in a cell; one opened anywhere else
#: while a table is open starts a new table (the open one was cut off)
_NESTS_TABLE = re.compile(r"<t[dh]\b[^<>]*>\s*$", re.IGNORECASE)
#: a line that goes on with an open table (after a blank line, anything else ends it)
TABLE_MARKUP = re.compile(r"^[ \t]*</?(?:tr|td|th|thead|tbody|tfoot|caption|col|colgroup)\b",
                          re.IGNORECASE)
_DISPLAY_OPEN = re.compile(
    r"\$\$|\\\[|\\begin\{(equation|align|alignat|gather|multline|eqnarray|displaymath|"
    r"flalign)(\*?)\}")


@dataclass(frozen=True)
class Block:
    kind: BlockKind
    start: int
    end: int


def nests_table(text: str, position: int) -> bool:
    """Whether a ``<table>`` at ``position``, inside an open table, is nested in a cell."""
    return bool(_NESTS_TABLE.search(text[max(0, position - 400):position]))


def split_lines(text: str) -> list[str]:
    """The page's lines, each with its line ending: ``\n``, ``\r\n`` or ``\r`` as in
    CommonMark (``str.splitlines`` also breaks at ``\x85``, ``\u2028``, form feeds...,
    where the rest of the parser, reading ``\n``, sees one line)."""
    return _LINE.findall(text)


def split_blocks(text: str) -> list[Block]:
    """The blocks of a (normalised) page, in reading order."""
    return _Scanner(text).run()


class _Scanner:
    """Walks the page line by line; each handler consumes lines and returns the next."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines: list[tuple[int, int]] = []
        pos = 0
        for line in split_lines(text):
            self.lines.append((pos, pos + len(line)))
            pos += len(line)
        self.starts = [start for start, _ in self.lines]
        self.blocks: list[Block] = []

    def run(self) -> list[Block]:
        i = 0
        while i < len(self.lines):
            i = self._at_line(i)
        return self.blocks

    # -- helpers -----------------------------------------------------------------------
    def line(self, i: int) -> str:
        start, end = self.lines[i]
        return self.text[start:end]

    def blank(self, i: int) -> bool:
        return not self.line(i).strip() or bool(_THINK.match(self.line(i)))

    def line_of(self, pos: int) -> int:
        return max(0, bisect.bisect_right(self.starts, pos) - 1)

    def next_content(self, i: int) -> int | None:
        """The first non-blank line from ``i`` on."""
        while i < len(self.lines) and self.blank(i):
            i += 1
        return i if i < len(self.lines) else None

    def emit(self, kind: BlockKind, start: int, end: int) -> None:
        end = start + len(self.text[start:end].rstrip())
        if end > start:
            self.blocks.append(Block(kind, start, end))

    # -- dispatch ----------------------------------------------------------------------
    def _at_line(self, i: int) -> int:
        if self.blank(i):
            return i + 1
        line = self.line(i)
        pos = self.lines[i][0] + len(line) - len(line.lstrip())
        if _FENCE.match(line):
            return self._code(i, pos)
        if HEADING.match(line.strip()) and not _TABLE_OPEN.search(line):
            self.emit("heading", pos, self.lines[i][1])
            return i + 1
        if self._pipe_table_end(i) is not None:
            end = self._pipe_table_end(i)
            assert end is not None
            self.emit("pipe_table", pos, self.lines[end - 1][1])
            return end
        return self._from(pos, i)

    def _from(self, pos: int, i: int) -> int:
        """Blocks starting at ``pos`` inside line ``i`` (also the rest of a line)."""
        rest = self.text[pos:self.lines[i][1]]
        table = _TABLE_OPEN.search(rest)
        if table is not None:
            if table.start() > 0 and rest[:table.start()].strip():
                self.emit("paragraph", pos, pos + table.start())
            return self._table(pos + table.start(), i)
        latex_table = LATEX_TABLE_OPEN.match(rest)
        if latex_table is not None:
            return self._closed_block("latex_table", pos, i, f"\\end{{{latex_table.group(1)}}}")
        if OTSL_OPEN.match(rest):
            return self._closed_block("otsl_table", pos, i, "</otsl>")
        if _DISPLAY_OPEN.match(rest):
            return self._formula(pos, i)
        if DRAWING_OPEN.match(rest):
            return self._drawing(pos, i)
        image = IMAGE_REF.match(self.text, pos)
        if image is not None:
            last = self.line_of(image.end() - 1)
            self.emit("image_line", pos, self.lines[last][1])
            return last + 1
        if pos > self.lines[i][0] + len(self.line(i)) - len(self.line(i).lstrip()):
            self.emit("paragraph", pos, self.lines[i][1])  # text after a closing delimiter
            return i + 1
        return self._paragraph(i, pos)

    def _continue_after(self, stop: int, j: int) -> int:
        """Carry on with whatever follows ``stop`` on line ``j``."""
        if self.text[stop:self.lines[j][1]].strip():
            offset = len(self.text[stop:self.lines[j][1]]) - len(
                self.text[stop:self.lines[j][1]].lstrip())
            return self._from(stop + offset, j)
        return j + 1

    # -- handlers ----------------------------------------------------------------------
    def _code(self, i: int, pos: int) -> int:
        match = _FENCE.match(self.line(i))
        assert match is not None
        fence = match.group(1)
        j = i + 1
        while j < len(self.lines) and not self.line(j).strip().startswith(fence):
            j += 1
        last = min(j, len(self.lines) - 1)
        self.emit("code", pos, self.lines[last][1])
        return last + 1

    def _table(self, pos: int, i: int) -> int:
        depth, j, cursor, last = 0, i, pos, i
        while j < len(self.lines):
            for tag in _TABLE_TAG.finditer(self.text, max(cursor, self.lines[j][0]),
                                           self.lines[j][1]):
                opens = tag.group().lower().startswith("<table")
                if opens and depth > 0 and not nests_table(self.text, tag.start()):
                    self.emit("table", pos, tag.start())   # a new table: this one was cut
                    return self._from(tag.start(), j)
                depth += 1 if opens else -1
                if depth <= 0:
                    self.emit("table", pos, tag.end())
                    return self._continue_after(tag.end(), j)
            last = j
            following = self.next_content(j + 1)
            if following is None or (following > j + 1 and not self._table_markup(following)):
                break
            j = following
        self.emit("table", pos, self.lines[last][1])   # never closed: truncated
        return last + 1

    def _closed_block(self, kind: BlockKind, pos: int, i: int, close: str) -> int:
        """A LaTeX or OTSL table to its closing markup; never closed (cut off), to the
        end of its paragraph (an OTSL table also to the next one, closed in it)."""
        j = i
        while j + 1 < len(self.lines) and not self.blank(j + 1):
            j += 1
        otsl = kind == "otsl_table"
        end = self.text.find(close, pos, self.lines[j][1] if otsl else len(self.text))
        again = OTSL_OPEN.search(self.text, pos + 1, end if end >= 0 else self.lines[j][1])
        if otsl and again is not None:
            self.emit(kind, pos, again.start())
            return self._from(again.start(), self.line_of(again.start()))
        if end >= 0:
            self.emit(kind, pos, end + len(close))
            return self._continue_after(end + len(close), self.line_of(end))
        self.emit(kind, pos, self.lines[j][1])
        return j + 1

    def _drawing(self, pos: int, i: int) -> int:
        close = drawing_close(self.text[pos:self.lines[i][1]])
        if close is not None:
            return self._closed_block("drawing", pos, i, close)
        j = i   # bare SVG elements: to the end of their paragraph
        while j + 1 < len(self.lines) and not self.blank(j + 1):
            j += 1
        self.emit("drawing", pos, self.lines[j][1])
        return j + 1

    def _table_markup(self, i: int) -> bool:
        return bool(TABLE_MARKUP.match(self.line(i)))

    def _formula(self, pos: int, i: int) -> int:
        opener = _DISPLAY_OPEN.match(self.text, pos)
        assert opener is not None
        closer = {"$$": "$$", "\\[": "\\]"}.get(opener.group(),
                                                 f"\\end{{{opener.group(1)}{opener.group(2)}}}")
        j = i  # a display formula never spans a blank line or another block
        while j + 1 < len(self.lines) and not self.blank(j + 1) and not self._starts_block(
                j + 1, formulas=False):
            j += 1
        close = self.text.find(closer, opener.end(), self.lines[j][1])
        if close < 0:  # never closed: the formula runs to the end of its paragraph ...
            image = IMAGE_REF.search(self.text, opener.end(), self.lines[j][1])
            if image is not None:  # ... or to an image, which is no LaTeX
                self.emit("formula", pos, image.start())
                return self._from(image.start(), self.line_of(image.start()))
            self.emit("formula", pos, self.lines[j][1])
            return j + 1
        stop = close + len(closer)
        j = self.line_of(stop - 1)
        tail = self.text[stop:self.lines[j][1]]
        if EQUATION_NUMBER.match(tail):
            self.emit("formula", pos, self.lines[j][1])
            return j + 1
        number = self.next_content(j + 1) if not tail.strip() else None
        if number is not None and EQUATION_NUMBER.match(self.line(number)):
            self.emit("formula", pos, self.lines[number][1])
            return number + 1
        self.emit("formula", pos, stop)
        return self._continue_after(stop, j)

    def _pipe_table_end(self, i: int) -> int | None:
        """One past the last row of a pipe table starting at line ``i``, or None."""
        line = self.line(i).strip()
        if "|" not in line or i + 1 >= len(self.lines):
            return None
        following = self.line(i + 1).strip()
        fenced = line.startswith("|") and line.endswith("|") and len(line) > 1
        if is_delimiter_row(following) and not is_delimiter_row(line):
            leading = False
        elif fenced and following.startswith("|") and following.endswith("|"):
            leading = True
        else:
            return None
        j = i + 1
        while j < len(self.lines) and not self.blank(j) and "|" in self.line(j) and (
                not leading or self.line(j).strip().startswith("|")):
            j += 1
        return j

    def _paragraph(self, i: int, pos: int) -> int:
        is_list = bool(LIST_ITEM.match(self.line(i)))
        j = i + 1
        while j < len(self.lines):
            nxt = self.line(j)
            if not is_list and SETEXT_UNDERLINE.match(nxt):
                self.emit("heading", pos, self.lines[j][1])   # a setext heading
                return j + 1
            if self.blank(j) or self._starts_block(j):
                break
            if is_list != bool(LIST_ITEM.match(nxt)) and not (is_list and nxt[:1] in " \t"):
                break
            j += 1
        self.emit("list" if is_list else "paragraph", pos, self.lines[j - 1][1])
        return j

    def _starts_block(self, j: int, formulas: bool = True) -> bool:
        line = self.line(j)
        stripped = line.strip()
        return bool(_TABLE_OPEN.search(stripped) or (formulas and _DISPLAY_OPEN.match(stripped))
                    or LATEX_TABLE_OPEN.match(stripped) or OTSL_OPEN.match(stripped)
                    or IMAGE_REF.match(stripped) or DRAWING_OPEN.match(stripped)
                    or HEADING.match(stripped)
                    or _FENCE.match(line) or self._pipe_table_end(j) is not None)
