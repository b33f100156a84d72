"""A page written as an HTML document (Qwen-VL's "QwenVL HTML", Chandra's layout HTML), read
as the same elements.

Such a page is ``<html><body>`` (often in a fence tagged ``html``, often cut off with no
closing tags) whose blocks carry ``data-bbox="x0 y0 x1 y1"``: ``<h1>``-``<h6>``, ``<p>``,
lists, ``<div class="image">`` with an ``<img>``, ``<table>``, ``<address>``, formulas.
Like every normalisation it is a same-length rewrite, so spans still index the page as
the model wrote it:

- block tags are blanked and start a new paragraph (``<li>`` becomes a ``- `` item);
- inline tags are deleted (``<sup>`` reads ``^``, ``<sub>`` ``_``), as :data:`DELETED`
  characters that element text drops;
- tables are kept as HTML for the table parser; fence lines are blanked;
- each block tag with a box or a kind of its own (``h2`` a level-2 heading, a class or tag
  ending in ``caption`` a caption, ``formula``, ``image``, ``header``/``footer``, or
  Chandra's ``data-label``) becomes a :class:`~.grounding.Marker`, applied like DeepSeek's
  grounding markers; a boxed block's first inner block without a box takes its box;
- ``<math>`` reads ``$...$`` (``display="block"``: a ``$$`` formula of its own), a form's
  checkbox ``☑``/``☐``.

Boxes are read in the 0-1000 frame of the page image (Qwen3-VL, and Qwen2.5-VL when
asked for it); when a coordinate on the page exceeds 1000 they are pixels of the image
the model saw (Qwen2.5-VL's absolute coordinates: the image sent, resized as
:func:`~.figures.qwen25_input_size` says) and are scaled by its size, or dropped when
that size is unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from .blocks import TABLE_MARKUP, nests_table
from .figures import Box, attribute, sent_pixel_boxes, valid_box
from .grounding import FURNITURE, Marker
from .tables import SCRIPT_MARKS

#: stands for a deleted character in a same-length rewrite; element text drops it
DELETED = "\x00"

_DOCUMENT = re.compile(
    r"^\s*(?:(?:`{3,}|~{3,})[ \t]*html[ \t]*\n)?\s*(?:<!doctype\s+html[^<>]*>\s*)?"
    r"<(?:html|body)\b", re.IGNORECASE)
_DATA_BBOX = re.compile(r"<[a-z][a-z0-9]*\b[^<>]*\bdata-bbox\s*=", re.IGNORECASE)
_TAG = re.compile(r"<(?P<close>/?)(?P<name>[a-zA-Z][a-zA-Z0-9]*)\b(?P<attrs>[^<>]*)(?:>|\Z)")
_FENCE_LINE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})[ \t]*(?:html)?[ \t]*$",
                         re.IGNORECASE | re.MULTILINE)
_NUMBER = re.compile(r"-?\d{1,6}")
_BLANK_LINE = re.compile(r"\n[ \t]*\n\s*")
_BLOCK = {"html", "head", "title", "meta", "link", "body", "div", "p", "address", "ul", "ol",
          "li", "dl", "dt", "dd", "figure", "figcaption", "header", "footer", "section",
          "article", "main", "nav", "aside", "blockquote", "hr", "pre",
          "h1", "h2", "h3", "h4", "h5", "h6"}
_INLINE = {"b", "i", "u", "em", "strong", "a", "span", "font", "small", "big", "mark", "s",
           "del", "ins", "code", "tt", "var", "abbr", "cite", "q", "label", "sup", "sub", "chem"}
#: tags whose name is their kind; on other blocks a class names the kind
_KINDS = {"h1", "h2", "h3", "h4", "h5", "h6", "figcaption", "caption", "header", "footer",
          "formula", "equation", "image", "figure", "chart"}
#: blocks whose ``<img>`` is the figure itself, not a second one
_IMAGE_HOLDERS = {"image", "figure", "chart", "picture"}
_HOLDERS = {"div", "p", "figure", "section", "aside", "address", "span"}


@dataclass
class HtmlDocument:
    """The page rewritten for the block parser, and its markers."""

    text: str
    markers: list[Marker] = field(default_factory=list)


def is_html_document(text: str) -> bool:
    """A whole page as ``<html>``/``<body>`` (fenced or not), or blocks with ``data-bbox``."""
    return bool(_DOCUMENT.match(text) or _DATA_BBOX.search(text))


def read_html_document(text: str, sent_size: tuple[int, int] = (0, 0)) -> HtmlDocument | None:
    """The rewrite of an HTML document page, or None for any other page."""
    if not is_html_document(text):
        return None
    return _Rewriter(text, sent_size).run()


class _Rewriter:
    """One pass over the tags outside tables: blanks, markers and their boxes."""

    def __init__(self, text: str, sent_size: tuple[int, int]) -> None:
        self.text = text
        self.chars = list(text)
        self.sent_size = sent_size
        self.pixel_frame = _largest_coordinate(text) > 1000
        self.markers: list[Marker] = []
        self.table_depth = 0
        self.last_tag_end = 0
        self.math: list[bool] = []   # open <math> tags: display (block) or inline

    def run(self) -> HtmlDocument:
        for fence in _FENCE_LINE.finditer(self.text):
            self._fill(fence.start(), fence.end(), "")
        for tag in _TAG.finditer(self.text):
            self._tag(tag)
        return HtmlDocument("".join(self.chars), sorted(self.markers, key=lambda m: m.start))

    def _tag(self, tag: re.Match[str]) -> None:
        name, closing = tag.group("name").lower(), bool(tag.group("close"))
        if self.table_depth and self._table_left_open(tag.start()):
            self.table_depth = 0
        self.last_tag_end = tag.end()
        if name == "table":
            if not closing and self.table_depth and not nests_table(self.text, tag.start()):
                self.table_depth = 0   # as the block parser reads it: the open one was cut
            self.table_depth = max(0, self.table_depth + (-1 if closing else 1))
            if not closing and self.table_depth == 1:
                self._mark(tag, "table", tag.start())
            return
        if self.table_depth:
            return
        if name in _INLINE:
            self._fill(tag.start(), tag.end(), "" if closing else SCRIPT_MARKS.get(name, ""),
                       DELETED)
        elif name == "math":
            self._math(tag, closing)
        elif name == "input":   # a form's box: ticked or not, or the value written in it
            self._fill(tag.start(), tag.end(), _input_text(tag.group("attrs")), DELETED)
        elif name == "img" and attribute(tag.group("attrs"), "data-bbox") is not None:
            self._image(tag)
        elif name in _BLOCK:
            self._block(tag, name, closing)

    def _table_left_open(self, position: int) -> bool:
        """A table never closed ends, as the block parser ends it, at a blank line
        followed by a line that is no table markup (output cut off mid-table)."""
        between = self.text[self.last_tag_end:position]
        blank = _BLANK_LINE.search(between)
        if blank is None:
            return False
        line_start = self.last_tag_end + blank.end()
        end = self.text.find("\n", line_start)
        line = self.text[line_start:end if end >= 0 else len(self.text)]
        return not TABLE_MARKUP.match(line) and not line.lstrip().lower().startswith("<table")

    def _block(self, tag: re.Match[str], name: str, closing: bool) -> None:
        if name == "li" and not closing:
            self._fill(tag.start(), tag.end(), "\n- ")
        elif name == "li":
            self._fill(tag.start(), tag.end(), "")
        else:
            self._fill(tag.start(), tag.end(), "\n\n")
        if closing or name == "li":   # a list's box is its ``<ul>``'s
            return
        label = _label(name, tag.group("attrs"))
        if label in _KINDS or attribute(tag.group("attrs"), "data-bbox") is not None:
            self._mark(tag, label, tag.end(), limit=self._closing(tag, name))

    def _image(self, tag: re.Match[str]) -> None:
        """An ``<img>`` with a box: part of the block it opens (an image or formula div),
        or a figure of its own."""
        boxes = self._boxes(tag.group("attrs"))
        if not boxes:
            return   # no usable box: an image reference like any other
        self._fill(tag.start(), tag.end(), "")
        before = self.markers[-1] if self.markers else None
        if before is not None and before.label in _IMAGE_HOLDERS and not self.text[
                before.end:tag.start()].strip():
            # the holder has its image: it ends here (an image after it is another figure)
            self.markers[-1] = replace(before, end=tag.end(), boxes=before.boxes or boxes,
                                       limit=tag.end())
            return
        self.markers.append(Marker(tag.start(), tag.end(), "image", boxes, limit=tag.end()))

    def _math(self, tag: re.Match[str], closing: bool) -> None:
        """``<math>`` (Chandra) as ``$...$``, ``<math display="block">`` as ``$$...$$``
        in a block of its own."""
        if closing:
            display = self.math.pop() if self.math else False
            self._fill(tag.start(), tag.end(), "$$" if display else "$", DELETED)
            return
        display = (attribute(tag.group("attrs"), "display") or "").lower() == "block"
        self.math.append(display)
        self._fill(tag.start(), tag.end(), "\n\n$$" if display else "$", DELETED)

    def _mark(self, tag: re.Match[str], label: str, end: int, limit: int | None = None
              ) -> None:
        boxes = self._boxes(tag.group("attrs"))
        holder = self.markers[-1] if self.markers else None
        if not boxes and holder is not None and holder.boxes and holder.limit is not None \
                and tag.start() < holder.limit and not self.text[holder.end:tag.start()].strip():
            # the first block of a boxed layout block (Chandra's ``<div data-bbox
            # data-label="Section-Header"><h2>``) is that block: its box, its own kind
            # unless the holder is furniture
            self.markers[-1] = replace(holder, end=end, limit=limit or holder.limit,
                                       label=holder.label if holder.label in FURNITURE else label)
            return
        self.markers.append(Marker(tag.start(), end, label, boxes, limit=limit))

    def _boxes(self, attrs: str) -> list[Box]:
        value = attribute(attrs, "data-bbox")
        numbers = [int(n) for n in _NUMBER.findall(value or "")]
        if len(numbers) != 4:
            return []
        if self.pixel_frame:
            return sent_pixel_boxes(numbers, self.sent_size)
        left, top, right, bottom = (min(999, max(0, n)) for n in numbers)
        box = (left, top, right, bottom)
        return [box] if valid_box(box) else []

    def _closing(self, tag: re.Match[str], name: str) -> int | None:
        found = re.compile(rf"</{name}\s*>", re.IGNORECASE).search(self.text, tag.end())
        return found.start() if found else None

    def _fill(self, start: int, end: int, head: str, pad: str = " ") -> None:
        overwrite(self.chars, start, end, head, pad)


def overwrite(chars: list[str], start: int, end: int, head: str, pad: str = " ") -> None:
    """Overwrite ``chars[start:end]`` (a same-length rewrite): ``head`` first, as far as
    it fits, then ``pad``; line breaks stay where they are."""
    for k in range(start, end):
        if chars[k] not in "\r\n":
            chars[k] = head[k - start] if k - start < len(head) else pad


def _label(name: str, attrs: str) -> str:
    """A block's kind: its layout label (Chandra's ``data-label="Section-Header"``), its
    tag, or for a holder its first class (``div class="image"``)."""
    layout = (attribute(attrs, "data-label") or "").strip().lower()
    if layout:
        return layout
    if name in _HOLDERS:
        classes = (attribute(attrs, "class") or "").split()
        if classes:
            return classes[0].lower()
    return name



def _largest_coordinate(text: str) -> int:
    values = re.findall(r"""data-bbox\s*=\s*["']?([-\d\s,.]{1,80})""", text, re.IGNORECASE)
    return max((int(n) for value in values for n in _NUMBER.findall(value)), default=0)


def _input_text(attrs: str) -> str:
    """What a form's ``<input>`` shows: a ticked or empty box (as docling writes them), or
    its value (as far as it fits in the tag)."""
    kind = (attribute(attrs, "type") or "").lower()
    if kind in ("checkbox", "radio"):
        return "☑" if re.search(r"\bchecked\b", attrs, re.IGNORECASE) else "☐"
    return attribute(attrs, "value") or ""
