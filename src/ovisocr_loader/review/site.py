"""Write the review site: ``index.html``, a page per document, its page images.

Every file is written whole (:mod:`~ovisocr_loader.writes`): a full disk leaves
no cut page, and ``index.html`` is written last, listing only the documents
whose pages were all written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

from ..config import RenderSettings
from ..document import ParsedDocument
from ..writes import write_atomically
from .html import document_page, index_page
from .page_images import page_images

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")

#: Told of a document whose files could not be written (the site goes on without it).
OnWriteError = Callable[[ParsedDocument, OSError], None]


def write_site(docs: Iterable[ParsedDocument], folder: str | Path, *,
               render: RenderSettings | None = None, password: str | None = None,
               on_error: OnWriteError | None = None) -> Path:
    """Write the site for ``docs`` into ``folder``; returns the path of ``index.html``.

    Page images are rendered again from each document's source file (with
    ``render``, turned as the parse turned them); a source that is gone leaves its
    pages without images, never the site unwritten. A document whose files cannot
    be written raises ``OSError``, or, with ``on_error``, is reported there and left
    out of the index. ``index.html`` that cannot be written always raises.
    """
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    render = render or RenderSettings()
    entries = []
    for number, doc in enumerate(docs, start=1):
        slug = f"{number:03d}-{_UNSAFE.sub('_', Path(doc.source).name)[:60]}"
        try:
            _write_document(doc, root, slug, render, password)
        except OSError as exc:
            if on_error is None:
                raise
            on_error(doc, exc)
            continue
        entries.append((doc, f"{slug}.html"))
    index = root / "index.html"
    write_atomically(index, index_page(entries))
    return index


def _write_document(doc: ParsedDocument, root: Path, slug: str, render: RenderSettings,
                    password: str | None) -> None:
    """One document's page images, then its page."""
    images: dict[int, str | None] = {}
    for page_number, jpeg in page_images(doc, render, password):
        if jpeg is None:
            images[page_number] = None
            continue
        image = root / slug / f"page-{page_number}.jpg"
        image.parent.mkdir(exist_ok=True)
        write_atomically(image, jpeg)
        images[page_number] = f"{slug}/{image.name}"
    write_atomically(root / f"{slug}.html", document_page(doc, images, "index.html"))
