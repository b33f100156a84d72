"""One page from a source to the PNG sent: render, turn upright if asked, encode.

It runs off the event loop: in a worker thread, or in a render worker process
(:mod:`.render_workers`) for PDFs on disk.
"""

from __future__ import annotations

from ..config import RenderSettings
from .base import PageSource
from .encode import EncodedPage, encode_page, has_no_ink
from .orientation import turn_upright


def render_page(source: PageSource, page_number: int, settings: RenderSettings) -> EncodedPage:
    """Render, turn upright if asked, and encode one page."""
    page = source.render(page_number)
    blank = has_no_ink(page.image)   # a turn changes no pixel count: checked once
    if settings.orientation == "auto" and not blank:
        page = turn_upright(page)
    return encode_page(page, compress_level=settings.png_compress_level, blank=blank)
