"""PDF pages through PDFium (pypdfium2), rendered straight at the capped size.

PDFium is not thread-safe, so every call into it holds one process-wide lock;
rendering runs in worker threads so that the event loop keeps streaming.

A page whose every object draws in gray (a gray or black-and-white scan, black
text) is drawn straight into a one-byte-per-pixel bitmap: no colour render to
convert, no colour check (measured on a 150 DPI scan: 3.5 ms instead of 8.6). A
page made only of vector content is checked for colour on a quarter-size render
first; any other page holding images is drawn once in colour, because a second
render would decode its image again.
"""

from __future__ import annotations

import ctypes
import math
import re
import threading
from collections.abc import Iterable
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import Image

from ..config import RenderSettings
from ..errors import CorruptFileError, EmptyDocumentError, PasswordRequiredError
from .base import RenderedPage, select_pages
from .detect import SourceInput
from .encode import has_colour, page_mode
from .geometry import fit_scale, pixel_size

#: PDFium must not be entered from two threads at once.
PDFIUM_LOCK = threading.Lock()

_PASSWORD_ERROR = 4  # FPDF_ERR_PASSWORD
_EMPTY_TREE = re.compile(rb"/Count\s+0\b")
_PAGE_OBJECT = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")
_SNIFF_LIMIT = 1 << 20
#: reopen a PDF after this many rendered pages, so memory stays flat on long documents
REOPEN_EVERY = 64


class PdfSource:
    """A PDF opened for lazy rendering; honours each page's /Rotate."""

    def __init__(self, inp: SourceInput, settings: RenderSettings, *,
                 password: str | None = None, pages: Iterable[int] | None = None) -> None:
        self.name = inp.name
        self._settings = settings
        self._target = inp.path if inp.path is not None else inp.data
        self._password = password
        self._rendered = 0
        with PDFIUM_LOCK:
            try:
                self._pdf = pdfium.PdfDocument(self._target, password=password)
            except pdfium.PdfiumError as exc:
                if getattr(exc, "err_code", None) == _PASSWORD_ERROR:
                    if password is None:
                        raise PasswordRequiredError(
                            "PDF is encrypted and needs its password (password= in Python, "
                            "--password on the command line)", file=self.name) from exc
                    raise PasswordRequiredError("wrong password for encrypted PDF",
                                                file=self.name) from exc
                if _looks_pageless(inp):
                    raise EmptyDocumentError("PDF has no pages", file=self.name) from exc
                raise CorruptFileError(f"cannot open PDF ({exc})", file=self.name) from exc
            self.page_count = len(self._pdf)
        if self.page_count == 0:
            self.close()
            raise EmptyDocumentError("PDF has no pages", file=self.name)
        self.page_numbers = select_pages(pages, self.page_count, self.name)

    @property
    def path(self) -> Path | None:
        """The file on disk (None for a PDF given as bytes): what a render worker opens."""
        return self._target if isinstance(self._target, Path) else None

    @property
    def password(self) -> str | None:
        return self._password

    def render(self, page_number: int) -> RenderedPage:
        settings = self._settings
        with PDFIUM_LOCK:
            try:
                page = self._pdf[page_number - 1]
            except pdfium.PdfiumError as exc:
                raise CorruptFileError(f"cannot load page ({exc})", file=self.name,
                                       page=page_number) from exc
            try:
                width, height = page.get_size()
                scale = fit_scale(width, height, settings.dpi / 72.0,
                                  settings.min_pixels, settings.max_pixels)
                image = _render(page, width, height, scale)
            except (pdfium.PdfiumError, ValueError) as exc:
                raise CorruptFileError(f"cannot render page ({exc})", file=self.name,
                                       page=page_number) from exc
            finally:
                page.close()
            self._rendered += 1
            if self._rendered % REOPEN_EVERY == 0:
                self._reopen()
        return RenderedPage(page_number, image, scale * 72.0, (width, height))

    def _reopen(self) -> None:
        """Drop PDFium's cache of parsed objects, which otherwise keeps every page's
        image streams (measured: ~80 KB a scanned page) for the life of the document."""
        self._pdf.close()
        self._pdf = pdfium.PdfDocument(self._target, password=self._password)

    def close(self) -> None:
        with PDFIUM_LOCK:
            self._pdf.close()


def _rounding_crop(width: float, height: float, scale: float) -> tuple[float, float, float, float]:
    """Crop the sub-pixel sliver that pypdfium2's ceil() adds, so sizes follow round().

    Letter at 150 DPI is then 1275x1650 rather than 1275x1651; at most one pixel
    column/row, less than a pixel of page content, is dropped.
    """
    want_w, want_h = pixel_size(width, height, scale)
    extra_w = math.ceil(width * scale) - want_w
    extra_h = math.ceil(height * scale) - want_h
    return (0.0, extra_h * 0.5 / scale, extra_w * 0.5 / scale, 0.0)


def _looks_pageless(inp: SourceInput) -> bool:
    """PDFium refuses a PDF without pages with a stale error code; read the bytes instead."""
    if inp.data is not None:
        head = inp.data[:_SNIFF_LIMIT]
    elif inp.path is not None:
        with inp.path.open("rb") as fh:
            head = fh.read(_SNIFF_LIMIT)
    else:
        return False
    return bool(_EMPTY_TREE.search(head)) and not _PAGE_OBJECT.search(head)


def _render(page: pdfium.PdfPage, width: float, height: float, scale: float) -> Image.Image:
    crop = _rounding_crop(width, height, scale)
    gray = _draws_only_gray(page)
    if not gray and not _may_hold_images(page):
        probe = page.render(scale=scale / 4, rev_byteorder=True).to_pil()
        gray = not has_colour(probe)
    if gray:
        image: Image.Image = page.render(scale=scale, crop=crop, may_draw_forms=True,
                                         force_bitmap_format=pdfium_c.FPDFBitmap_Gray).to_pil()
        return image.copy()
    bitmap = page.render(scale=scale, crop=crop, may_draw_forms=True, rev_byteorder=True)
    return page_mode(bitmap.to_pil())


_VECTOR_TYPES = (pdfium_c.FPDF_PAGEOBJ_TEXT, pdfium_c.FPDF_PAGEOBJ_PATH,
                 pdfium_c.FPDF_PAGEOBJ_SHADING)


def _draws_only_gray(page: pdfium.PdfPage) -> bool:
    """True when the page certainly draws nothing in colour: no annotations, and only
    DeviceGray images, invisible text, and text and paths whose colours are gray.
    Anything else (a form XObject, a shading, another colour space) says False."""
    raw = page.raw
    if pdfium_c.FPDFPage_GetAnnotCount(raw):
        return False
    for index in range(pdfium_c.FPDFPage_CountObjects(raw)):
        obj = pdfium_c.FPDFPage_GetObject(raw, index)
        kind = pdfium_c.FPDFPageObj_GetType(obj)
        if kind == pdfium_c.FPDF_PAGEOBJ_IMAGE:
            if not _gray_image(raw, obj):
                return False
        elif kind == pdfium_c.FPDF_PAGEOBJ_TEXT:
            invisible = pdfium_c.FPDFTextObj_GetTextRenderMode(obj) == \
                pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE
            if not invisible and not _gray_paint(obj):
                return False
        elif kind != pdfium_c.FPDF_PAGEOBJ_PATH or not _gray_paint(obj):
            return False
    return True


def _gray_image(page: pdfium_c.FPDF_PAGE, obj: pdfium_c.FPDF_PAGEOBJECT) -> bool:
    metadata = pdfium_c.FPDF_IMAGEOBJ_METADATA()   # the page is needed for the colour space
    if not pdfium_c.FPDFImageObj_GetImageMetadata(obj, page, metadata):
        return False
    return bool(metadata.colorspace == pdfium_c.FPDF_COLORSPACE_DEVICEGRAY)


def _gray_paint(obj: pdfium_c.FPDF_PAGEOBJECT) -> bool:
    """Fill and stroke colours both known and gray (red, green and blue equal); a
    pattern or shading has no such colour."""
    for get in (pdfium_c.FPDFPageObj_GetFillColor, pdfium_c.FPDFPageObj_GetStrokeColor):
        r, g, b, a = (ctypes.c_uint() for _ in range(4))
        if not get(obj, r, g, b, a) or not r.value == g.value == b.value:
            return False
    return True


def _may_hold_images(page: pdfium.PdfPage) -> bool:
    """True when the page has an image or a form XObject (which may hold one)."""
    raw = page.raw
    for index in range(pdfium_c.FPDFPage_CountObjects(raw)):
        if pdfium_c.FPDFPageObj_GetType(pdfium_c.FPDFPage_GetObject(raw, index)) \
                not in _VECTOR_TYPES:
            return True
    return False
