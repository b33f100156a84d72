"""LaTeX document structure in Markdown (Mathpix Markdown, which GOT-OCR's format mode
writes, and other LaTeX-trained parsers), read as the Markdown it stands for.

Same-length rewrites, so spans still index the page as the model wrote it:

- ``\\title{...}``, ``\\section*{...}`` (also ``chapter``, ``subsection``,
  ``subsubsection``) alone on a line become ``#``-headings of their level
  (``\\section`` level 2);
- ``\\item`` opens a ``- `` list item;
- ``\\author{...}`` and ``\\date{...}`` alone on a line keep their text as a paragraph;
- the lines that begin or end ``abstract``, ``itemize``, ``enumerate``,
  ``description``, ``center`` and ``quote`` environments are blanked: their text reads
  as paragraphs and lists.
"""

from __future__ import annotations

import re

_SECTION = re.compile(r"^[ \t]*(\\(title|chapter|section|subsection|subsubsection)\*?\{)"
                      r"[^{}\n]*(\})[ \t]*$", re.MULTILINE)
_LEVEL = {"title": 1, "chapter": 1, "section": 2, "subsection": 3, "subsubsection": 4}
_ENVIRONMENT = re.compile(r"^[ \t]*\\(?:begin|end)\{(?:abstract|itemize|enumerate|description|"
                          r"center|quote)\}[ \t]*$", re.MULTILINE)
_FRONT = re.compile(r"^[ \t]*(\\(?:author|date)\{)[^{}\n]*(\})[ \t]*$", re.MULTILINE)
_ITEM = re.compile(r"^[ \t]*(\\item)\b", re.MULTILINE)

#: a stretch of the page and what replaces it (as long as it)
Rewrite = tuple[int, int, str]


def latex_structure(text: str) -> list[Rewrite]:
    """The rewrites that turn the page's LaTeX structure into Markdown."""
    if "\\" not in text:
        return []
    rewrites: list[Rewrite] = []
    for section in _SECTION.finditer(text):
        start, end = section.span(1)
        marks = "#" * _LEVEL[section.group(2)]
        rewrites.append((start, end, marks.ljust(end - start)))
        rewrites.append((*section.span(3), " "))
    for front in _FRONT.finditer(text):
        rewrites += [(*front.span(1), " " * len(front.group(1))), (*front.span(2), " ")]
    rewrites += [(*match.span(), " " * len(match.group())) for match in _ENVIRONMENT.finditer(text)]
    rewrites += [(*match.span(1), "-    ") for match in _ITEM.finditer(text)]
    return rewrites
