"""Page normalisation before block parsing, as same-length rewrites.

Markup that carries no content is overwritten with spaces rather than removed,
so every offset into the normalised page is an offset into the page as the model
wrote it and element spans stay valid against ``PageResult.markdown``:

- a page (or region) wrapped in a fenced block tagged ``markdown``/``md``, or in
  an untagged fence whose body is clearly Markdown structure, loses its fence
  lines (an ``html`` fence holding only a table too); real code blocks are kept;
- presentational wrappers (``<div style=...>``, ``<center>``, ``<p align=...>``,
  ``<span>``, ``<font>``, ``<figure>``...) lose their tags and keep their text;
- HTML comments are dropped, except docling's ``<!-- image -->`` figure placeholder;
- grounding markers (``<|ref|>title<|/ref|><|det|>[[...]]<|/det|>``, Unlimited-OCR's
  ``<|det|>title [...]<|/det|>``) are blanked, one opening a line ending in a blank
  line, so that what follows it is a block of its own: they become kinds and boxes
  (:mod:`.grounding`);
- semantic tags (``<page_number>``, ``<watermark>``, ``<signature>``;
  :mod:`.semantic_tags`) are deleted (:data:`~.html_document.DELETED` characters,
  which element text drops: ``page <page_number>7</page_number>.`` reads ``page 7.``);
- LaTeX structure (``\\section*{...}``, ``\\item``, environment lines; Mathpix Markdown)
  becomes the Markdown it stands for (:mod:`.latex_structure`);
- a line ending in a lone carriage return ends in a line feed instead;
- YAML front matter at the top of the page (olmOCR writes ``primary_language``,
  ``rotation_correction``... between ``---`` lines before the text) is blanked: it
  describes the page, it is not on it.
"""

from __future__ import annotations

import re

from .blocks import split_lines
from .grounding import MARKER as GROUNDING_MARKER
from .html_document import DELETED, overwrite
from .latex_structure import Rewrite, latex_structure
from .semantic_tags import TAG as SEMANTIC_TAG

_FENCE_OPEN = re.compile(r"^[ \t]{0,3}(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*?)[ \t]*$")
_MARKDOWN_TAGS = {"markdown", "md", "mdx", "gfm"}
_WRAPPER = re.compile(
    r"</?(?:div|center|p|span|font|section|article|figure|figcaption|header|footer|main|"
    r"body|html|blockquote)(?:\s[^<>]*)?/?>",
    re.IGNORECASE)
_COMMENT = re.compile(r"<!--(?!\s*image\s*-->).*?-->", re.DOTALL | re.IGNORECASE)
_STRONG_MARKDOWN = re.compile(
    r"<table|^[ \t]*\$\$|^[ \t]*\\\[|<img\b|!\[[^\]\n]*\]\(|^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*\|",
    re.IGNORECASE | re.MULTILINE)
#: ``key: value`` lines between ``---`` lines opening the page (keys as YAML front
#: matter writes them: lower-case words joined by ``_``, never a form's ``Name:``)
FRONT_MATTER = re.compile(
    r"\A\s*---[ \t]*\r?\n(?:[a-z][a-z0-9_]*:[^\n]*\n)+---[ \t]*(?=\r?\n|\Z)")
_HEADING_LINE = re.compile(r"^#{1,6}[ \t]+\S", re.MULTILINE)
_CODE_LINE = re.compile(r"[;{}]\s*$|^\s*(?:def|class|import|from|return|for|while|if)\b|\s=\s",
                        re.MULTILINE)

#: a line that ends in a carriage return alone (CommonMark's third line ending), which
#: the block parser splits at: after it the page's lines all end in ``\n``
_LONE_CR = re.compile(r"\r(?!\n)")

Span = tuple[int, int]


def normalise_page(text: str) -> str:
    """``text`` with fences around Markdown and wrapper markup blanked (same length)."""
    text = _LONE_CR.sub("\n", text)
    fences, code = _fences(text)
    blanks = list(fences)
    front_matter = FRONT_MATTER.match(text)
    if front_matter is not None:
        blanks.append(front_matter.span())
    for match in (*_WRAPPER.finditer(text), *_COMMENT.finditer(text)):
        if not _inside(match.start(), code):
            blanks.append(match.span())
    # a grounding marker opening a line heads a block of its own, even when the line
    # before it is text (Unlimited-OCR separates its blocks by one line break)
    markers = [match.span() for match in GROUNDING_MARKER.finditer(text)
               if not _inside(match.start(), code)]
    heads = [span for span in markers if not text[_line_start(text, span[0]):span[0]].strip()]
    tags = [match.span() for match in SEMANTIC_TAG.finditer(text)
            if not _inside(match.start(), code)]
    rewritten = _rewrite(text, [r for r in latex_structure(text) if not _inside(r[0], code)])
    rewritten = _blank(_blank(rewritten, blanks + markers), heads, tail="\n\n")
    return _blank(rewritten, tags, DELETED)


def _fences(text: str) -> tuple[list[Span], list[Span]]:
    """(fence lines to blank, code regions to keep), scanning fences in order."""
    lines = split_lines(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    blanks: list[Span] = []
    code: list[Span] = []
    i = 0
    while i < len(lines):
        opened = _FENCE_OPEN.match(lines[i].rstrip("\r\n"))
        if opened is None:
            i += 1
            continue
        close = _closing_line(lines, i, opened.group("fence"))
        body = "".join(lines[i + 1:close])
        if _wraps_markdown(opened.group("info"), body):
            blanks.append((starts[i], starts[i] + len(lines[i].rstrip("\r\n"))))
            if close < len(lines):
                blanks.append((starts[close], starts[close] + len(lines[close].rstrip("\r\n"))))
            i += 1  # the body is parsed as Markdown, nested fences included
            continue
        end = _closing_line(lines, i, opened.group("fence")[:3], text_after=True)
        code.append((starts[i], starts[min(end + 1, len(lines))]))
        i = end + 1
    return blanks, code


def _closing_line(lines: list[str], opener: int, fence: str, text_after: bool = False) -> int:
    """Index of the line closing the fence (``len(lines)`` when it is never closed): a
    line of fence characters alone, or with ``text_after`` any line starting with the
    fence, where the block parser ends a code block (its text after the fence is kept)."""
    for j in range(opener + 1, len(lines)):
        stripped = lines[j].strip()
        if stripped.startswith(fence) and (text_after or not stripped.strip(fence[0])):
            return j
    return len(lines)


def _wraps_markdown(info: str, body: str) -> bool:
    """A fence around page content (the model's wrapping) rather than a code block."""
    tag = info.strip().lower()   # one word; an info string with more is code
    if tag in _MARKDOWN_TAGS:
        return True
    if tag == "html":
        stripped = body.strip().lower()
        return stripped.startswith("<table") and stripped.endswith("</table>")
    if tag:
        return False
    if _STRONG_MARKDOWN.search(body):
        return True
    return bool(_HEADING_LINE.search(body)) and not _CODE_LINE.search(body)


def _line_start(text: str, position: int) -> int:
    return max(text.rfind("\n", 0, position), text.rfind("\r", 0, position)) + 1


def _inside(position: int, regions: list[Span]) -> bool:
    return any(start <= position < end for start, end in regions)


def _rewrite(text: str, rewrites: list[Rewrite]) -> str:
    if not rewrites:
        return text
    chars = list(text)
    for start, end, replacement in rewrites:
        chars[start:end] = replacement
    return "".join(chars)


def _blank(text: str, spans: list[Span], fill: str = " ", tail: str = "") -> str:
    """``text`` with each span overwritten by ``fill`` (line breaks kept), ending in
    ``tail`` where the span is long enough."""
    if not spans:
        return text
    chars = list(text)
    for start, end in spans:
        overwrite(chars, start, end, "", fill)
        if end - start >= len(tail):
            chars[end - len(tail):end] = tail
    return "".join(chars)
