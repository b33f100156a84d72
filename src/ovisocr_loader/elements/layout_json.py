"""A page written as a JSON list of layout cells (dots.ocr's layout prompt), read as the
same elements as Markdown.

Asked for layout and text, dots.ocr answers ``[{"bbox": [x1, y1, x2, y2], "category":
"Text", "text": "..."}, ...]`` (often fenced as ``json``, cut off when the token cap
ends it): boxes in pixels of the image it saw (the image sent, resized as Qwen2.5-VL
resizes it: :func:`~.figures.qwen25_input_size`), one of eleven categories, and the
cell's text as Markdown (HTML for a table, LaTeX for a formula, none for a picture).
Like :mod:`.html_document` this is a same-length rewrite, so spans still index the
page as the model wrote it:

- each cell's text stays where it stands, its JSON escapes decoded: an escape becomes
  its character after :data:`~.html_document.DELETED` characters (a line break after
  spaces, so a blank line stays blank);
- everything else (brackets, keys, boxes) is blanked, with a blank line before each
  cell's text, so every cell is a block of its own;
- each cell becomes a :class:`~.grounding.Marker` that gives the element it holds its
  kind and box (``Title`` a heading, ``Section-header`` a level-2 heading, ``Caption``,
  ``Formula``, ``Page-header``/``Page-footer`` furniture, ``Picture`` a figure).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .figures import Box, sent_pixel_boxes
from .grounding import Marker
from .html_document import DELETED, HtmlDocument

_LAYOUT = re.compile(r'\A\s*(?:(?:`{3,}|~{3,})[ \t]*json[ \t]*\r?\n\s*)?\[\s*\{\s*'
                     r'"(?:bbox|category|text)"\s*:', re.IGNORECASE)
#: a string (its closing quote missing where the output was cut off), punctuation, or
#: any other run (numbers, literals)
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*(?P<close>")?|[{}\[\]:,]|[^\s"{}\[\]:,]+', re.DOTALL)
_NUMBER = re.compile(r"-?\d{1,7}(?:\.\d{1,6})?")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
#: dots.ocr's categories in the grounding labels' terms (others: their own name)
_LABELS = {"section-header": "sub_title", "list-item": "text", "footnote": "text"}


def is_layout_json(text: str) -> bool:
    """A page that is a JSON list of layout cells (fenced as ``json`` or not)."""
    return bool(_LAYOUT.match(text))


def read_layout_json(text: str, sent_size: tuple[int, int] = (0, 0)) -> HtmlDocument | None:
    """The rewrite of a layout-JSON page, or None for any other page."""
    if not is_layout_json(text):
        return None
    return _Rewriter(text, sent_size).run()


@dataclass
class _Cell:
    start: int
    key: str | None = None
    label: str = ""
    numbers: list[float] = field(default_factory=list)
    text_span: tuple[int, int] | None = None


class _Rewriter:
    """One pass over the JSON tokens: cells, their text decoded in place, markers."""

    def __init__(self, text: str, sent_size: tuple[int, int]) -> None:
        self.text = text
        self.chars = [c if c in "\r\n" else " " for c in text]
        self.sent_size = sent_size
        self.markers: list[Marker] = []

    def run(self) -> HtmlDocument:
        depth, cell, expect_key = 0, None, False
        for token in _TOKEN.finditer(self.text, self.text.index("[")):
            value = token.group()
            if value in "{[":
                depth += 1
                if value == "{" and depth == 2:
                    cell, expect_key = _Cell(token.start()), True
            elif value in "}]":
                if value == "}" and depth == 2 and cell is not None:
                    self._close(cell, token.end())
                    cell = None
                depth -= 1
            elif cell is None or value == ":":
                continue
            elif value == ",":
                expect_key = depth == 2
            elif expect_key and value.startswith('"'):
                cell.key, expect_key = value.strip('"').lower(), False
            else:
                self._value(cell, token, depth)
        if cell is not None:   # cut off inside a cell: keep what it holds
            self._close(cell, len(self.text))
        return HtmlDocument("".join(self.chars), self.markers)

    def _value(self, cell: _Cell, token: re.Match[str], depth: int) -> None:
        value = token.group()
        if cell.key == "bbox" and depth == 3 and _NUMBER.fullmatch(value):
            cell.numbers.append(float(value))
        elif cell.key == "category" and depth == 2 and value.startswith('"'):
            cell.label = value.strip('"').strip().lower()
        elif cell.key == "text" and depth == 2 and value.startswith('"'):
            closed = token.group("close") is not None
            cell.text_span = (token.start() + 1, token.end() - (1 if closed else 0))
            self._decode(*cell.text_span)

    def _close(self, cell: _Cell, end: int) -> None:
        label = _LABELS.get(cell.label, cell.label)
        if cell.text_span is None:
            self.markers.append(Marker(cell.start, end, label, self._boxes(cell), limit=end))
            return
        start, stop = cell.text_span
        for k in (start - 2, start - 1):   # a blank line before the text: a block of its own
            if k >= 0 and self.chars[k] == " ":
                self.chars[k] = "\n"
        self.markers.append(Marker(cell.start, start, label, self._boxes(cell), limit=stop))

    def _boxes(self, cell: _Cell) -> list[Box]:
        return sent_pixel_boxes(cell.numbers, self.sent_size)

    def _decode(self, start: int, end: int) -> None:
        """Write the string's characters over ``[start, end)``, each escape as its
        character after fillers (spaces before a line break, else DELETED)."""
        i = start
        while i < end:
            char, length = _unescape(self.text, i, end)
            fill = " " if char in "\r\n" else DELETED
            self.chars[i:i + length] = [fill] * (length - 1) + [char] if char else \
                [DELETED] * length
            i += length


def _unescape(text: str, i: int, end: int) -> tuple[str, int]:
    """The character at ``i`` and how many characters of ``text`` spell it ("" for a
    broken escape at the cut-off)."""
    if text[i] != "\\":
        return text[i], 1
    if i + 1 >= end:
        return "", 1
    code = text[i + 1]
    if code != "u":
        return _ESCAPES.get(code, code), 2
    if not _HEX4.fullmatch(text, i + 2, i + 6) or i + 6 > end:
        return "", min(6, end - i)
    point = int(text[i + 2:i + 6], 16)
    low = text[i + 8:i + 12] if text[i + 6:i + 8] == "\\u" and i + 12 <= end else ""
    if 0xD800 <= point < 0xDC00 and _HEX4.fullmatch(low) and 0xDC00 <= int(low, 16) < 0xE000:
        return chr(0x10000 + ((point - 0xD800) << 10) + int(low, 16) - 0xDC00), 12
    return ("" if 0xD800 <= point < 0xE000 else chr(point)), 6

