"""A page written in DocTags (SmolDocling, Granite-Docling), read as the same elements as
Markdown.

DocTags (docling-core's format) wraps each element in a tag naming its kind, its box
first as four location tokens: ``<text><loc_58><loc_44><loc_426><loc_91>Some
text</text>``: left, top, right, bottom of the page image on a 0-500 grid (a value at most
499), so twice a value is the 0-999 model frame. Elements follow one another with or
without line breaks. Tables are OTSL (:mod:`.otsl`); lists are ``<unordered_list>`` or
``<ordered_list>`` of ``<list_item>``; ``<code>`` starts with a language token
(``<_Python_>``); a ``<picture>`` holds a classification tag (``<bar_chart>``) and
perhaps a ``<caption>``. Like :mod:`.html_document` this is a same-length rewrite, so
spans still index the page as the model wrote it:

- an element's tags and location tokens are blanked, with a blank line before it, so it
  is a block of its own; a list item starts a ``- `` (``1. ``) line, a code element is
  a fenced block (its language the info string);
- ``<otsl>`` tables are kept as written for the table parser, their location tokens
  blanked (a table opened inside a line of text reads as text: its cells spaced, rows
  on lines of their own);
- every other tag (``<doctag>``, classifications, ``<end_of_utterance>``) is blanked, and
  so is a fence around the page;
- each element becomes a :class:`~.grounding.Marker` with its box and kind: ``title`` a
  level-1 heading, ``section_header_level_N`` level N+1 (as docling's Markdown writes
  them), ``caption``, ``formula``, ``page_header``/``page_footer`` page furniture,
  ``picture``/``chart`` a figure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .figures import Box, valid_box
from .grounding import Marker
from .html_document import HtmlDocument, overwrite

_ELEMENTS = (r"title|section_header_level_[1-6]|text|paragraph|otsl|picture|chart|caption|"
             r"formula|code|list_item|page_header|page_footer|footnote|document_index|"
             r"reference|handwritten_text|checkbox_selected|checkbox_unselected|smiles|"
             r"key_value_region|form")
_DOCTAGS = re.compile(r"\A\s*(?:(?:`{3,}|~{3,})[^\n]*\n\s*)?<doctag>")
_LOCATED = re.compile(rf"<(?:{_ELEMENTS})>\s*<loc_\d{{1,3}}/?>")
#: a tag (lower-case name), or a code language token (``<_Python_>``, ``<_C++_>``)
_TAG = re.compile(r"<(?P<close>/?)(?P<name>[a-z_][a-z0-9_]*)/?>|<_(?P<language>[^<>\s]+?)_>")
_PARTIAL_TAG = re.compile(r"<(?:/?[a-z_][a-z0-9_]*|_[^<>\s]*|/)?\Z")
_ELEMENT = re.compile(rf"(?:{_ELEMENTS})")
_OPENING = re.compile(rf"<(?:{_ELEMENTS})>")
_LOC = re.compile(r"loc_(\d{1,3})")
_FENCE_LINE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})[ \t]*\w*[ \t]*$", re.MULTILINE)
_CELL = re.compile(r"fcel|ecel|lcel|ucel|xcel|nl|ched|rhed|srow")
_LISTS = {"unordered_list", "ordered_list"}
_LABELS = {"title": "title", "caption": "caption", "formula": "formula", "otsl": "table",
           "page_header": "page_header", "page_footer": "page_footer", "picture": "picture",
           "chart": "picture"}


def is_doctags(text: str) -> bool:
    """A page in DocTags: opening with ``<doctag>``, or with an element and its box."""
    return bool(_DOCTAGS.match(text) or _LOCATED.search(text))


def read_doctags(text: str, sent_size: tuple[int, int] = (0, 0)) -> HtmlDocument | None:
    """The rewrite of a DocTags page, or None for any other page (``sent_size`` is not
    needed: boxes are fractions of the page)."""
    if not is_doctags(text):
        return None
    return _Rewriter(text).run()


@dataclass
class _Open:
    """An element whose closing tag has not come yet."""

    name: str
    start: int
    #: where its location tokens may still follow (the end of its tag or last token)
    after: int
    numbers: list[int] = field(default_factory=list)
    #: its block starts at its tag (a table's markup, a list line, a code fence), not
    #: after its location tokens
    at_tag: bool = False
    #: a code element written as a fenced block
    fenced: bool = False


class _Rewriter:
    """One pass over the tags: blanks, fences, list lines, markers."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.chars = list(text)
        self.markers: list[Marker] = []
        self.stack: list[_Open] = []
        self.lists: list[int] = []    # per open list: items so far, -1 when unordered
        self.otsl: str | None = None  # inside a table: "block", or "text" when inline

    def run(self) -> HtmlDocument:
        for fence in _FENCE_LINE.finditer(self.text):   # a fence around the page
            self._fill(fence, "")
        for tag in _TAG.finditer(self.text):
            if tag.group("language") is not None:
                self._language(tag)
            elif tag.group("name").startswith("loc_"):
                self._location(tag)
            elif tag.group("close"):
                self._closing(tag, tag.group("name"))
            else:
                self._opening(tag, tag.group("name"))
        partial = _PARTIAL_TAG.search(self.text)
        if partial is not None:   # cut off inside a tag
            self._fill(partial, "")
        while self.stack:   # cut off: what is open ends with the page
            self._mark(self.stack.pop(), None)
        return HtmlDocument("".join(self.chars), sorted(self.markers, key=lambda m: m.start))

    def _opening(self, tag: re.Match[str], name: str) -> None:
        if self.otsl and _CELL.fullmatch(name):
            if self.otsl == "text":
                self._fill(tag, "\n" if name == "nl" else "", " ")
            return
        cut = self.otsl == "block" and name != "caption"
        if self.otsl and name != "caption":
            self.otsl = None   # another element: the table was cut off
        fenced = name == "code" and self._closed_code(tag)
        if name == "otsl":
            self._table(tag, cut)
        elif name == "list_item":
            self._item(tag, cut)
        elif name in _LISTS:
            self.lists.append(0 if name == "ordered_list" else -1)
            self._fill(tag, "\n\n")
        elif not (self.otsl == "block" and name == "caption"):   # the table parser's caption
            block = _ELEMENT.fullmatch(name) or name == "page_break"
            self._fill(tag, "\n\n```" if fenced else "\n\n" if block else "")
        if _ELEMENT.fullmatch(name) and self.otsl != "text":
            at_tag = name in ("otsl", "list_item") or fenced or self.otsl == "block"
            self.stack.append(_Open(name, tag.start(), tag.end(), at_tag=at_tag, fenced=fenced))

    def _closed_code(self, tag: re.Match[str]) -> bool:
        """Whether a code element holds code and is closed before another element
        starts: then it is a fenced block, else (cut off, or empty) text."""
        close = self.text.find("</code>", tag.end())
        following = _OPENING.search(self.text, tag.end())
        return close >= 0 and (following is None or close < following.start()) and bool(
            _TAG.sub("", self.text[tag.end():close]).strip())

    def _table(self, tag: re.Match[str], after_table: bool) -> None:
        """A table: kept for the table parser, unless it opens inside a line of text."""
        inline = not after_table and self._text_on_line(tag.start())
        self.otsl = "text" if inline else "block"
        if inline:
            self._fill(tag, "")

    def _item(self, tag: re.Match[str], after_table: bool) -> None:
        """A list line (a line break first unless the item starts one already; a blank
        line after a table cut off, which runs to the end of its paragraph)."""
        head = "\n\n" if after_table else "\n" if self._text_on_line(tag.start()) else ""
        if self.lists and self.lists[-1] >= 0:
            self.lists[-1] += 1
            self._fill(tag, f"{head}{self.lists[-1]}. ")
        else:
            self._fill(tag, f"{head}- ")

    def _text_on_line(self, position: int) -> bool:
        """Whether the rewritten line holds text before ``position``."""
        line_start = max(0, position - 4000)
        for k in range(position - 1, line_start - 1, -1):
            if self.chars[k] in "\r\n":
                return False
            if self.chars[k] not in " \t":
                return True
        return False

    def _closing(self, tag: re.Match[str], name: str) -> None:
        if self.otsl == "block" and name in ("otsl", "caption"):
            self.otsl = None if name == "otsl" else self.otsl
            self._close_element(tag, name)   # kept as written for the table parser
            return
        if name == "otsl" and self.otsl == "text":   # its rows ended at each <nl>
            self.otsl = None
            self._fill(tag, "")
            return
        if name in _LISTS and self.lists:
            self.lists.pop()
        fenced = name == "code" and any(entry.fenced for entry in self.stack[-1:])
        head = "\n```" if fenced else "" if name == "list_item" else "\n\n"
        self._fill(tag, head if _ELEMENT.fullmatch(name) or name in _LISTS else "")
        self._close_element(tag, name)

    def _close_element(self, tag: re.Match[str], name: str) -> None:
        if not any(entry.name == name for entry in self.stack):
            return
        while self.stack:   # elements left open inside it end with it
            entry = self.stack.pop()
            self._mark(entry, tag.start())
            if entry.name == name:
                return

    def _location(self, tag: re.Match[str]) -> None:
        self._fill(tag, "")
        entry = self.stack[-1] if self.stack else None
        if entry is None or len(entry.numbers) == 4 or self.text[entry.after:tag.start()].strip():
            return   # a location not right after an element's tag (a cell's): no box
        match = _LOC.fullmatch(tag.group("name"))
        assert match is not None
        entry.numbers.append(int(match.group(1)))
        entry.after = tag.end()

    def _language(self, tag: re.Match[str]) -> None:
        """A code element's language: its fence's info string."""
        entry = self.stack[-1] if self.stack else None
        if entry is None or not entry.fenced or self.text[entry.after:tag.start()].strip():
            self._fill(tag, "")
            return
        self._fill(tag, tag.group("language"))
        self.chars[tag.end() - 1] = "\n"
        entry.after = tag.end()

    def _mark(self, entry: _Open, limit: int | None) -> None:
        if entry.fenced and entry.after < len(self.text) and (
                self.chars[entry.after - 1] != "\n"):
            self.chars[entry.after - 1] = "\n"   # no language: the code starts a line
        label = _LABELS.get(entry.name, "text")
        if entry.name.startswith("section_header_level_"):
            label = f"h{min(6, int(entry.name[-1]) + 1)}"
        self.markers.append(Marker(entry.start, entry.start if entry.at_tag else entry.after,
                                   label, self._boxes(entry), limit=limit))

    def _boxes(self, entry: _Open) -> list[Box]:
        if len(entry.numbers) != 4:
            return []
        left, top, right, bottom = (min(999, 2 * n) for n in entry.numbers)
        box = (left, top, right, bottom)
        return [box] if valid_box(box) else []

    def _fill(self, tag: re.Match[str], head: str, pad: str = " ") -> None:
        overwrite(self.chars, tag.start(), tag.end(), head, pad)
