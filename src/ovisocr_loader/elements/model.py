"""Typed page elements: the structure RAG needs, with page metadata.

Pure data, no I/O and no framework: both integrations and the chunker read it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ElementKind = Literal["heading", "paragraph", "list", "table", "formula", "figure", "caption",
                      "page_furniture", "code"]


class TableData(BaseModel):
    """A parsed HTML table.

    ``rows`` is a rectangular grid of cell strings: a cell spanning several
    positions (rowspan/colspan) is repeated into each of them. ``header_rows``
    counts the leading rows that are headers (``<thead>`` or all ``<th>``).
    """

    model_config = ConfigDict(extra="forbid")

    rows: list[list[str]]
    header_rows: int = 0
    html: str
    truncated: bool = False

    def to_markdown(self) -> str:
        """A pipe table; the first row is the header row (an empty one if none)."""
        if not self.rows:
            return ""
        width = max(len(r) for r in self.rows)

        def line(cells: list[str]) -> str:
            padded = [*cells, *[""] * (width - len(cells))]
            return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ")
                                     for c in padded) + " |"

        header = self.rows[0] if self.header_rows else [""] * width
        body = self.rows[1:] if self.header_rows else self.rows
        return "\n".join([line(header), "|" + "---|" * width, *(line(r) for r in body)])

    def to_text(self) -> str:
        """Plain text for embeddings: one line per row, ``header: value`` pairs when known."""
        if not self.rows:
            return ""
        header = self.rows[0] if self.header_rows else None
        body = self.rows[self.header_rows:] if self.header_rows else self.rows
        lines = []
        if header is not None and not body:
            return "; ".join(c for c in header if c)
        for row in body:
            if header is not None:
                pairs = [f"{h}: {c}" if h and h != c else c
                         for h, c in zip(header, row, strict=True)]
                lines.append("; ".join(p for p in pairs if p))
            else:
                lines.append("; ".join(c for c in row if c))
        return "\n".join(line for line in lines if line)


class Element(BaseModel):
    """One block of a page, in reading order.

    ``span`` is the character range in the page Markdown. Frames of the figure
    boxes: ``bbox`` is the model's 0-1000 frame of the page image; ``pixel_bbox``
    the rendered page image's pixels; ``pdf_bbox`` PDF points with the origin at
    the top-left corner of the displayed (rotated) page, y growing downwards.
    """

    model_config = ConfigDict(extra="forbid")

    kind: ElementKind
    text: str
    page_number: int
    index: int
    span: tuple[int, int]
    level: int | None = None
    latex: str | None = None
    equation_number: str | None = None
    table: TableData | None = None
    bbox: tuple[int, int, int, int] | None = None
    pixel_bbox: tuple[int, int, int, int] | None = None
    pdf_bbox: tuple[float, float, float, float] | None = None
    image_png: bytes | None = Field(default=None, repr=False)
    image_path: str | None = None
