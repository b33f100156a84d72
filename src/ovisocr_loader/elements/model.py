"""Typed page elements: the structure RAG needs, with page metadata.

Pure data, no I/O and no framework: both integrations and the chunker read it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .table_text import preferred_texts

ElementKind = Literal["heading", "paragraph", "list", "table", "formula", "figure", "caption",
                      "page_furniture", "code"]


class TableData(BaseModel):
    """A parsed table (HTML, a Markdown pipe table, a LaTeX tabular or DocTags' OTSL).

    ``rows`` is a rectangular grid of cell strings: a cell spanning several
    positions (rowspan/colspan) is repeated into each of them. ``header_rows``
    counts the leading rows that are headers (``<thead>``/``<th>``, a pipe table's
    rows above its delimiter, or inferred: see :mod:`ovisocr_loader.elements.tables`).
    ``html`` is the table as the model wrote it (built from the grid for a pipe
    table, a tabular or OTSL); ``truncated`` marks a table that was never closed.
    """

    model_config = ConfigDict(extra="forbid")

    rows: list[list[str]]
    header_rows: int = 0
    html: str
    truncated: bool = False

    def column_headers(self) -> list[str]:
        """One header per column: the distinct header cells above it, top-down, joined
        with ``" / "`` (``% Recovery / Soxtec``); empty strings without header rows."""
        width = max((len(r) for r in self.rows), default=0)
        headers = []
        for col in range(width):
            parts: list[str] = []
            for row in self.rows[: self.header_rows]:
                cell = row[col] if col < len(row) else ""
                if cell and cell not in parts:
                    parts.append(cell)
            headers.append(" / ".join(parts))
        return headers

    def to_markdown(self) -> str:
        """A pipe table whose header row is the composed header (an empty one if none)."""
        if not self.rows:
            return ""
        width = max(len(r) for r in self.rows)

        def line(cells: list[str]) -> str:
            padded = [*cells, *[""] * (width - len(cells))]
            return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ")
                                     for c in padded) + " |"

        body = self.rows[self.header_rows:]
        return "\n".join([line(self.column_headers()), "|" + "---|" * width,
                          *(line(r) for r in body)])

    def to_text(self) -> str:
        """Plain text for embeddings and keyword search: header lines, then one line per
        row tying each value to its row label and column (see :mod:`.table_text`)."""
        return next(preferred_texts(self.rows, self.header_rows))


class Element(BaseModel):
    """One block of a page, in reading order.

    ``span`` is the character range in the page Markdown. Frames of the figure
    boxes: ``bbox`` is the model's 0-1000 frame of the page image; ``pixel_bbox``
    the rendered page image's pixels; ``pdf_bbox`` PDF points with the origin at
    the top-left corner of the displayed (rotated) page, y growing downwards.
    A figure's ``text`` is the image's alt text and ``src`` the reference the model
    wrote (None for OvisOCR2's stub-free placeholders).
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
    src: str | None = None
