"""A file's pages read as one report: what a page break cut is whole again.

Pages come from the model one at a time, so everything they hold stops at the page
edge. Given every page of a file in order, :func:`read_report` gives the report's
blocks: each page element once, except that a table continued at the top of the
next page (:mod:`.continued_tables`) and a paragraph (or a list's last item) that
runs on there (:mod:`.broken_paragraphs`) become one block made of both parts. Only furniture
(running headers, page numbers) may stand between the parts, and the pages must
follow each other. The page elements are left as they are: a block that joins
parts is a new element, and it lists the parts (with their pages and boxes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..elements.model import Element
from .broken_paragraphs import join_paragraphs, runs_on
from .continued_tables import continues, join_tables


@dataclass(frozen=True)
class ReportBlock:
    """One unit of a report: ``element`` is how it reads; ``parts`` the page elements
    it was made of (one, unless a page break cut it)."""

    element: Element
    parts: tuple[Element, ...]

    @property
    def pages(self) -> list[int]:
        return sorted({part.page_number for part in self.parts})


def read_report(pages: Sequence[Sequence[Element]]) -> list[ReportBlock]:
    """Every element of ``pages`` (in order) as report blocks, joined over page breaks."""
    blocks: list[ReportBlock] = []
    last: int | None = None   # the index of the last block that is not furniture
    for elements in pages:
        for position, element in enumerate(elements):
            if element.kind == "page_furniture":
                blocks.append(ReportBlock(element, (element,)))
                continue
            opens_page = all(e.kind == "page_furniture" for e in elements[:position])
            if opens_page and last is not None and _cut_by_break(blocks[last], element):
                blocks[last] = _joined(blocks[last], element)
                continue
            blocks.append(ReportBlock(element, (element,)))
            last = len(blocks) - 1
    return blocks


def _cut_by_break(block: ReportBlock, element: Element) -> bool:
    """Is ``element``, first on its page, the rest of ``block``, last on the page before?"""
    before = block.element
    if block.parts[-1].page_number + 1 != element.page_number:
        return False
    if before.kind == "table" and element.kind == "table":
        return (before.table is not None and element.table is not None
                and continues(before.table, element.table))
    return (before.kind in ("paragraph", "list") and element.kind == "paragraph"
            and runs_on(before.text, element.text))


def _joined(block: ReportBlock, element: Element) -> ReportBlock:
    before = block.element
    if before.table is not None and element.table is not None:
        table = join_tables(before.table, element.table)
        joined = before.model_copy(update={"table": table, "text": table.to_text()})
    else:
        joined = before.model_copy(update={"text": join_paragraphs(before.text, element.text)})
    return ReportBlock(joined, (*block.parts, element))
