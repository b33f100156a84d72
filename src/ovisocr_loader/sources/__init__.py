"""Sources: files to lazily rendered page images. No network here."""

from __future__ import annotations

from collections.abc import Iterable

from ..config import RenderSettings
from .base import PageSource, RenderedPage, select_pages
from .detect import SUPPORTED_SUFFIXES, Source, SourceInput, expand_paths, load_input, sniff
from .encode import EncodedPage, encode_page
from .images import ImageSource
from .pdf import PdfSource


def open_source(inp: SourceInput, settings: RenderSettings, *, password: str | None = None,
                pages: Iterable[int] | None = None) -> PageSource:
    """Open an identified input for rendering (PDF or image)."""
    if inp.kind == "pdf":
        return PdfSource(inp, settings, password=password, pages=pages)
    return ImageSource(inp, settings, pages=pages)


__all__ = [
    "SUPPORTED_SUFFIXES",
    "EncodedPage",
    "ImageSource",
    "PageSource",
    "PdfSource",
    "RenderedPage",
    "Source",
    "SourceInput",
    "encode_page",
    "expand_paths",
    "load_input",
    "open_source",
    "select_pages",
    "sniff",
]
