"""What every page source gives: a page count and one rendered page on demand."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from PIL import Image

from ..errors import SourceError


@dataclass
class RenderedPage:
    """One page as pixels, before encoding.

    ``dpi`` is the effective resolution of ``image`` (None for an image file whose
    resolution is unknown); ``page_size_pt`` is the page size in PDF points after
    /Rotate, for PDF sources only (used to map figure boxes back onto the page).
    ``rotation`` is how far ``image`` was turned clockwise from the page as stored
    (0, 90, 180 or 270; see :mod:`.orientation`).
    """

    page_number: int
    image: Image.Image
    dpi: float | None
    page_size_pt: tuple[float, float] | None = None
    rotation: int = 0


class PageSource(Protocol):
    """A document opened for rendering. Pages render lazily, one call per page."""

    name: str
    page_count: int
    page_numbers: list[int]

    def render(self, page_number: int) -> RenderedPage:
        """Render one page (1-based); raise a SourceError naming the page on failure."""
        ...

    def close(self) -> None:
        """Release the underlying document."""
        ...


def select_pages(pages: Iterable[int] | None, page_count: int, name: str) -> list[int]:
    """Validate a 1-based page selection; None selects every page."""
    if pages is None:
        return list(range(1, page_count + 1))
    selected = sorted(set(int(p) for p in pages))
    bad = [p for p in selected if not 1 <= p <= page_count]
    if bad:
        raise SourceError(
            f"page {bad[0]} out of range (the document has {page_count} pages)", file=name
        )
    if not selected:
        raise SourceError("empty page selection", file=name)
    return selected
