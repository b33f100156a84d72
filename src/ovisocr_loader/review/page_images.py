"""Page images for the review site: rendered again from the source, as the model saw
them (turned upright when the parse turned them), small enough for a browser."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from pathlib import Path

from ..config import RenderSettings
from ..document import ParsedDocument
from ..sources import PageSource, load_input, open_source
from ..sources.orientation import turn_clockwise

log = logging.getLogger("ovisocr_loader")

#: Longest side of a page image on the site, in pixels.
DISPLAY_PIXELS = 1400

def page_images(doc: ParsedDocument, render: RenderSettings, password: str | None
                ) -> Iterator[tuple[int, bytes | None]]:
    """``(page_number, JPEG bytes or None)`` for every page of ``doc``; None when the
    source file is gone or the page cannot be rendered (the site says so)."""
    source = _open(doc, render, password)
    try:
        for page in doc.pages:
            yield page.page_number, _image(source, page.page_number, page.rotation, doc)
    finally:
        if source is not None:
            source.close()


def _open(doc: ParsedDocument, render: RenderSettings, password: str | None
          ) -> PageSource | None:
    if doc.error is not None or not doc.pages or not Path(doc.source).is_file():
        return None
    try:
        return open_source(load_input(doc.source), render, password=password)
    except Exception as exc:   # shown as a missing image, never fatal for the site
        log.warning("%s: no page images for the review site (%s)", doc.source, exc)
        return None


def _image(source: PageSource | None, number: int, rotation: int, doc: ParsedDocument
           ) -> bytes | None:
    if source is None or number not in source.page_numbers:
        return None
    try:
        image = source.render(number).image
    except Exception as exc:
        log.warning("%s page %d: no image for the review site (%s)", doc.source, number, exc)
        return None
    image = turn_clockwise(image, rotation)
    image.thumbnail((DISPLAY_PIXELS, DISPLAY_PIXELS))
    out = io.BytesIO()
    image.convert("L" if image.mode == "L" else "RGB").save(out, format="JPEG", quality=80)
    return out.getvalue()
