"""Generated test pages that the simulator can recognise.

Each page carries a small bar code (a start marker, a 16-bit page id and an
8-bit checksum) in its top margin, drawn in page-relative coordinates so that
it survives rendering and rescaling. The simulator decodes it from the image it
receives and answers with the Markdown registered for that id.
"""

from __future__ import annotations

import io
import itertools
import zlib
from collections.abc import Iterable, Sequence
from typing import BinaryIO

from PIL import Image, ImageDraw, ImageFont

from .scripts import synthetic_markdown

_START = (1, 0, 1, 1, 0)
_ID_BITS = 16
_SUM_BITS = 8
_CELL_W = 0.018   # of the page width
_X0 = 0.05
_Y0 = 0.012       # of the page height
_CELL_H = 0.014

_ids = itertools.count(1)


def next_page_id() -> int:
    """A fresh page id for this process (tests use it to keep pages unique)."""
    return next(_ids) % (1 << _ID_BITS) or next(_ids)


def _checksum(page_id: int) -> int:
    return (page_id * 37 + 11) % 251


def _bits(page_id: int) -> list[int]:
    id_bits = [(page_id >> i) & 1 for i in reversed(range(_ID_BITS))]
    sum_bits = [(_checksum(page_id) >> i) & 1 for i in reversed(range(_SUM_BITS))]
    return [*_START, *id_bits, *sum_bits]


def draw_page_id(image: Image.Image, page_id: int) -> None:
    """Draw the bar code for ``page_id`` onto ``image`` in place."""
    if not 0 < page_id < (1 << _ID_BITS):
        raise ValueError("page_id must be in 1..65535")
    w, h = image.size
    draw = ImageDraw.Draw(image)
    black = 0 if image.mode in ("L", "1") else (0, 0, 0)
    for i, bit in enumerate(_bits(page_id)):
        if bit:
            left = w * (_X0 + i * _CELL_W)
            top = h * _Y0
            draw.rectangle([left, top, left + w * _CELL_W - 1, top + h * _CELL_H], fill=black)


def read_page_id(image: Image.Image) -> int | None:
    """Decode the bar code of a generated page, or None for any other image."""
    gray = image.convert("L")
    w, h = gray.size
    cy = h * (_Y0 + _CELL_H / 2)
    values = []
    for i in range(len(_START) + _ID_BITS + _SUM_BITS):
        cx = w * (_X0 + (i + 0.5) * _CELL_W)
        box = (int(cx - w * _CELL_W / 4), int(cy - h * _CELL_H / 4),
               int(cx + w * _CELL_W / 4) + 1, int(cy + h * _CELL_H / 4) + 1)
        region = gray.crop(box)
        histogram = region.histogram()
        total = sum(histogram) or 1
        mean = sum(level * count for level, count in enumerate(histogram)) / total
        values.append(1 if mean < 128 else 0)
    if tuple(values[: len(_START)]) != _START:
        return None
    id_bits = values[len(_START): len(_START) + _ID_BITS]
    sum_bits = values[len(_START) + _ID_BITS:]
    page_id = int("".join(map(str, id_bits)), 2)
    checksum = int("".join(map(str, sum_bits)), 2)
    return page_id if page_id and checksum == _checksum(page_id) else None


def read_turned_page_id(image: Image.Image) -> tuple[int | None, int]:
    """The page id of a generated page however it is turned, and how far clockwise it
    is turned from upright (0, 90, 180, 270); ``(None, 0)`` for any other image."""
    for turn in (0, 90, 180, 270):
        upright = image if turn == 0 else image.rotate(turn, expand=True)  # counter-clockwise
        page_id = read_page_id(upright)
        if page_id is not None:
            return page_id, turn
    return None, 0


def turned(image: Image.Image, degrees: int) -> Image.Image:
    """``image`` turned ``degrees`` clockwise, as a sideways or upside-down scan."""
    return image.rotate(-degrees, expand=True)


def page_image(page_id: int | None = None, *, size: tuple[int, int] = (1275, 1650),
               lines: Sequence[str] = (), colour: bool = False, font_size: int | None = None
               ) -> Image.Image:
    """A white page with optional bar code and text lines (Pillow's bundled font)."""
    mode = "RGB" if colour else "L"
    image = Image.new(mode, size, (255, 255, 255) if colour else 255)
    if page_id is not None:
        draw_page_id(image, page_id)
    if lines:
        draw = ImageDraw.Draw(image)
        fsize = font_size or max(10, size[1] // 70)
        font = ImageFont.load_default(size=fsize)
        y = size[1] * 0.06
        ink = (20, 40, 160) if colour else 0
        for line in lines:
            draw.text((size[0] * 0.08, y), line, fill=ink, font=font)
            y += fsize * 1.5
    return image


def make_pdf(images: Sequence[Image.Image], *, dpi: float = 150) -> bytes:
    """An image-only PDF (like a scanner's), one page per image at ``dpi``."""
    if not images:
        raise ValueError("need at least one page")
    buffer = io.BytesIO()
    first, *rest = [im.convert("RGB") if im.mode not in ("L", "RGB") else im for im in images]
    first.save(buffer, format="PDF", save_all=True, append_images=rest, resolution=dpi)
    return buffer.getvalue()


def make_tiff(images: Sequence[Image.Image], *, fax: bool = False, dpi: float = 300) -> bytes:
    """A multi-frame TIFF; ``fax=True`` stores bilevel CCITT Group 4 frames."""
    frames = [im.convert("1") if fax else im for im in images]
    buffer = io.BytesIO()
    frames[0].save(buffer, format="TIFF", save_all=True, append_images=frames[1:],
                   compression="group4" if fax else "tiff_lzw", dpi=(dpi, dpi))
    return buffer.getvalue()


def write_pdf(target: BinaryIO, images: Iterable[Image.Image], *, dpi: float = 150) -> int:
    """Stream an image-only PDF to ``target`` one page at a time; returns the page count.

    For benchmark inputs of a thousand pages: memory stays at one page image,
    where Pillow's ``save_all`` would hold every page at once.
    """
    writer = _ImagePdfWriter(target, dpi)
    for image in images:
        writer.add_page(image)
    return writer.close()


class _ImagePdfWriter:
    """Writes objects as they come and remembers their offsets for the xref table.
    Object 1 is the catalog and 2 the page tree, both written last; each page takes
    three numbers from 3 on (image, content stream, page)."""

    def __init__(self, target: BinaryIO, dpi: float) -> None:
        self._target = target
        self._dpi = dpi
        self._offsets: dict[int, int] = {}
        self._kids: list[int] = []
        self._next = 3
        header = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"
        target.write(header)
        self._written = len(header)

    def add_page(self, image: Image.Image) -> None:
        if image.mode not in ("L", "RGB"):
            image = image.convert("RGB")
        width, height = image.size
        w_pt, h_pt = width * 72 / self._dpi, height * 72 / self._dpi
        data = zlib.compress(image.tobytes(), 6)
        space = "/DeviceGray" if image.mode == "L" else "/DeviceRGB"
        pixels, content, page = self._next, self._next + 1, self._next + 2
        self._next += 3
        self._put(pixels, (f"<< /Type /XObject /Subtype /Image /Width {width} "
                           f"/Height {height} /ColorSpace {space} /BitsPerComponent 8 "
                           f"/Filter /FlateDecode /Length {len(data)} >>\nstream\n").encode()
                  + data + b"\nendstream")
        drawing = f"q {w_pt:.2f} 0 0 {h_pt:.2f} 0 0 cm /Im0 Do Q".encode()
        self._put(content, b"<< /Length %d >>\nstream\n" % len(drawing) + drawing
                  + b"\nendstream")
        self._put(page, (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {w_pt:.2f} {h_pt:.2f}] "
                         f"/Resources << /XObject << /Im0 {pixels} 0 R >> >> "
                         f"/Contents {content} 0 R >>").encode())
        self._kids.append(page)

    def close(self) -> int:
        """Write the page tree, the catalog and the xref table; returns the page count."""
        if not self._kids:
            raise ValueError("need at least one page")
        kids = " ".join(f"{k} 0 R" for k in self._kids)
        self._put(2, f"<< /Type /Pages /Count {len(self._kids)} /Kids [{kids}] >>".encode())
        self._put(1, b"<< /Type /Catalog /Pages 2 0 R >>")
        xref, total = self._written, self._next
        lines = [f"xref\n0 {total}\n0000000000 65535 f \n"]
        lines += [f"{self._offsets[n]:010d} 00000 n \n" for n in range(1, total)]
        lines.append(f"trailer\n<< /Size {total} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n")
        self._target.write("".join(lines).encode())
        return len(self._kids)

    def _put(self, number: int, body: bytes) -> None:
        self._offsets[number] = self._written
        chunk = f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
        self._target.write(chunk)
        self._written += len(chunk)


def marked_pdf(count: int, *, size: tuple[int, int] = (1275, 1650), dpi: float = 150
               ) -> tuple[bytes, list[int]]:
    """A PDF of ``count`` recognisable pages; returns the bytes and the page ids."""
    ids = [next_page_id() for _ in range(count)]
    pages = [page_image(pid, size=size, lines=[f"Page {n}"]) for n, pid in enumerate(ids, 1)]
    return make_pdf(pages, dpi=dpi), ids


def text_page(page_id: int | None = None, *, seed: int = 0,
              size: tuple[int, int] = (1275, 1650), lines: int = 42) -> Image.Image:
    """A page filled with lines of prose (like a letter or a report page), for tests
    that need a page whose text direction can be told, such as orientation."""
    words = synthetic_markdown(str(seed).encode(), tokens=900).replace("#", "").split()
    text = [" ".join(words[i:i + 11]) for i in range(0, len(words), 11)][:lines]
    return page_image(page_id, size=size, lines=text)
