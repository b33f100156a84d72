"""Figure crops, cut from the page image while it is still in flight.

Called once per page right after its answer arrives, so crops never require
keeping page images alive: memory stays bounded by the render window.
"""

from __future__ import annotations

import io
import logging
import os
import re
from pathlib import Path

from PIL import Image

from ..sources.png import encode_png
from ..writes import write_atomically
from .figures import to_pixels
from .model import Element

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
log = logging.getLogger("ovisocr_loader")
#: folders already said to refuse crops (once each per process)
_UNWRITABLE: set[str] = set()


def crop_file_name(sha256: str, page_number: int, figure_number: int) -> str:
    """The file name of a figure crop, from the input's content hash: stable, so
    adapters can find a crop again from a page's metadata alone."""
    return _UNSAFE.sub("_", f"{sha256[:12]}_p{page_number}_fig{figure_number}") + ".png"


def figure_number(elements: list[Element], figure: Element) -> int:
    """A figure's 1-based number among the figures of its page, in reading order."""
    return 1 + sum(1 for e in elements if e.kind == "figure" and e.index < figure.index)


def crop_figures(page_png: bytes, elements: list[Element], directory: str | None,
                 sha256: str, page_number: int, rotation: int = 0) -> None:
    """Attach PNG bytes to each figure element; also write files when ``directory`` is set.

    Files are named after :func:`figure_number`, so they can be found again later.
    ``page_png`` is the image sent: on a page turned upright (``rotation``), crops are
    cut from it by ``bbox``, so they come out upright too.
    """
    with Image.open(io.BytesIO(page_png)) as page:
        page.load()
        for element in (e for e in elements if e.kind == "figure"):
            box = element.pixel_bbox if not rotation else (
                to_pixels(element.bbox, page.width, page.height) if element.bbox else None)
            if box is None:
                continue
            left, top, right, bottom = box
            if right <= left or bottom <= top:
                continue
            crop = page.crop((left, top, right, bottom))
            element.image_png = encode_png(crop if crop.mode in ("L", "RGB")
                                           else crop.convert("RGB"))
            if directory is not None:
                name = crop_file_name(sha256, page_number, figure_number(elements, element))
                element.image_path = _saved(Path(directory) / name, element.image_png)


def _saved(path: Path, png: bytes) -> str | None:
    """Write one crop file; a folder that cannot take it costs the file, never the page
    (its PNG stays on the element): said once per folder."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, png)
    except OSError as exc:
        if str(path.parent) not in _UNWRITABLE:
            _UNWRITABLE.add(str(path.parent))
            log.warning("cannot write figure crops to %s (%s); figures keep their PNG "
                        "bytes, without image_path", path.parent, exc.strerror or exc)
        return None
    return os.fspath(path)
