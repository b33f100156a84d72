"""Write the review site: ``index.html``, a page per document, its page images."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from ..config import RenderSettings
from ..document import ParsedDocument
from .html import document_page, index_page
from .page_images import page_images

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def write_site(docs: Iterable[ParsedDocument], folder: str | Path, *,
               render: RenderSettings | None = None, password: str | None = None) -> Path:
    """Write the site for ``docs`` into ``folder``; returns the path of ``index.html``.

    Page images are rendered again from each document's source file (with
    ``render``, turned as the parse turned them); a source that is gone leaves its
    pages without images, never the site unwritten.
    """
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    render = render or RenderSettings()
    entries = []
    for number, doc in enumerate(docs, start=1):
        slug = f"{number:03d}-{_UNSAFE.sub('_', Path(doc.source).name)[:60]}"
        images: dict[int, str | None] = {}
        for page_number, jpeg in page_images(doc, render, password):
            if jpeg is None:
                images[page_number] = None
                continue
            image = root / slug / f"page-{page_number}.jpg"
            image.parent.mkdir(exist_ok=True)
            image.write_bytes(jpeg)
            images[page_number] = f"{slug}/{image.name}"
        (root / f"{slug}.html").write_text(document_page(doc, images, "index.html"),
                                           encoding="utf-8")
        entries.append((doc, f"{slug}.html"))
    index = root / "index.html"
    index.write_text(index_page(entries), encoding="utf-8")
    return index
