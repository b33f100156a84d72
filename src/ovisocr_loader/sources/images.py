"""Image files as pages: PNG, JPEG (CMYK, EXIF orientation), WebP, BMP, GIF
(first frame) and TIFF (every frame, CCITT G4 fax included).

An image whose resolution is known and above the target DPI is brought down to
it (a 300 DPI fax becomes a 150 DPI page). An image without a trustworthy
resolution is taken as one page and brought down to at most the pixel area of a
Letter/A4 page at the target DPI (a 2550x3300 scan becomes about 1300x1690).
Then, as for PDFs, the page is scaled into the model's pixel bounds. JPEGs are
decoded at reduced size; other formats are reduced by an integer factor right
after decoding, before any mode conversion, so no full-size copy is ever made
(and only one image above :data:`HUGE_PIXELS` is decoded at a time). A
multi-frame TIFF stays open and is walked once, in order: each page costs the
same whatever its frame number.
"""

from __future__ import annotations

import io
import math
import threading
import warnings
from collections.abc import Iterable

from PIL import Image, ImageOps, UnidentifiedImageError

from ..config import RenderSettings
from ..errors import CorruptFileError, EmptyDocumentError
from .base import RenderedPage, select_pages
from .detect import SourceInput
from .encode import has_colour
from .geometry import fit_scale, pixel_size

_MIN_TRUSTED_DPI = 50.0
_MAX_TRUSTED_DPI = 4800.0
#: page area assumed for an image of unknown resolution (8.5 x 11.69 in covers Letter and A4).
_ASSUMED_PAGE_SQIN = 8.5 * 11.69
#: Decoded images larger than this (in pixels) take turns: one at a time per process.
HUGE_PIXELS = 40_000_000
_HUGE_DECODES = threading.Semaphore(1)
#: Modes that ``Image.reduce`` handles; others are converted after decoding.
_REDUCIBLE = {"L", "LA", "RGB", "RGBA", "RGBa", "La", "I", "F", "CMYK"}


class ImageSource:
    """An image file opened for lazy, frame-by-frame rendering."""

    def __init__(self, inp: SourceInput, settings: RenderSettings, *,
                 pages: Iterable[int] | None = None) -> None:
        self.name = inp.name
        self._inp = inp
        self._settings = settings
        self._lock = threading.Lock()
        self._frames: Image.Image | None = None   # a multi-frame TIFF, kept open
        image = self._open()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)   # Pillow's "Corrupt EXIF data"
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                frames = getattr(image, "n_frames", 1) if inp.image_format == "tiff" else 1
        except BaseException:
            image.close()
            raise
        if frames > 1:
            self._frames = image   # n_frames walked the file once; seeks now cost nothing
        else:
            image.close()
        if frames < 1:
            raise EmptyDocumentError("image has no frames", file=self.name)
        self.page_count = frames
        self.page_numbers = select_pages(pages, frames, self.name)

    def _open(self) -> Image.Image:
        inp = self._inp
        fp = str(inp.path) if inp.path is not None else io.BytesIO(inp.data or b"")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)   # e.g. "Corrupt EXIF data"
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                return Image.open(fp)
        except Image.DecompressionBombError as exc:
            raise CorruptFileError(f"image too large to decode safely ({exc})",
                                   file=self.name) from exc
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
            raise CorruptFileError(f"cannot decode image ({exc})", file=self.name) from exc

    def render(self, page_number: int) -> RenderedPage:
        try:
            with self._lock, warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)   # e.g. "Corrupt EXIF data"
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                if self._frames is not None:
                    self._frames.seek(page_number - 1)
                    return self._render(self._frames, page_number)
                with self._open() as image:
                    return self._render(image, page_number)
        except CorruptFileError:
            raise
        except (OSError, SyntaxError, ValueError, EOFError, Image.DecompressionBombError) as exc:
            raise CorruptFileError(f"cannot decode image ({exc})", file=self.name,
                                   page=page_number) from exc

    def _render(self, image: Image.Image, page_number: int) -> RenderedPage:
        settings = self._settings
        dpi = _trusted_dpi(image)
        width, height = _oriented_size(image)
        factor = _target_factor(width, height, dpi, settings.dpi)
        factor = fit_scale(width, height, factor, settings.min_pixels, settings.max_pixels)
        target = pixel_size(width, height, factor)
        if image.format == "JPEG" and factor < 1:
            image.draft(image.mode, target)
        huge = image.width * image.height > HUGE_PIXELS
        with _HUGE_DECODES if huge else _NO_LOCK:
            image.load()
            page = _reduce_towards(image, target)
        page = ImageOps.exif_transpose(normalize_mode(page))
        if page.size != target:
            page = page.resize(target, Image.Resampling.LANCZOS, reducing_gap=3.0)
        if page.mode == "RGB" and not has_colour(page):
            page = page.convert("L")
        effective_dpi = dpi * factor if dpi else None
        return RenderedPage(page_number, page, effective_dpi, None)

    def close(self) -> None:
        if self._frames is not None:
            self._frames.close()
            self._frames = None


class _NoLock:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


_NO_LOCK = _NoLock()


def _reduce_towards(image: Image.Image, target: tuple[int, int]) -> Image.Image:
    """An integer box reduction that stays at least as large as ``target`` (orientation
    aside), done before any conversion so that no full-size copy is made."""
    k = math.isqrt(max(1, (image.width * image.height) // max(1, target[0] * target[1])))
    if k < 2 or image.mode not in _REDUCIBLE:
        return image
    if image.mode in ("RGBA", "LA"):
        # Pillow reduces these through a full-size premultiplied copy; band by band,
        # only one full-size band exists at a time (edges are composited on white later)
        bands = [image.getchannel(i).reduce(k) for i in range(len(image.getbands()))]
        return Image.merge(image.mode, bands)
    return image.reduce(k)


def _target_factor(width: int, height: int, dpi: float | None, target_dpi: float) -> float:
    """Downscale factor towards the target DPI; never upscales here."""
    if dpi:
        return min(1.0, target_dpi / dpi)
    cap = _ASSUMED_PAGE_SQIN * target_dpi * target_dpi
    return min(1.0, math.sqrt(cap / (width * height)))


def _trusted_dpi(image: Image.Image) -> float | None:
    dpi = image.info.get("dpi")
    if not dpi:
        return None
    try:
        x = float(dpi[0])  # a tuple of floats or IFDRational
    except (TypeError, ValueError, IndexError):
        return None
    return x if _MIN_TRUSTED_DPI <= x <= _MAX_TRUSTED_DPI else None


def _oriented_size(image: Image.Image) -> tuple[int, int]:
    """Image size after EXIF orientation (5-8 swap the axes)."""
    orientation = image.getexif().get(0x0112, 1)
    w, h = image.size
    return (h, w) if orientation in (5, 6, 7, 8) else (w, h)


def normalize_mode(image: Image.Image) -> Image.Image:
    """Bring any mode to L or RGB; transparency is composited on white."""
    mode = image.mode
    if mode in ("L", "RGB"):
        return image
    if mode == "1":
        return image.convert("L")
    if mode.startswith("I;16") or mode in ("I", "F"):
        return image.convert("I").point(lambda v: v * (1 / 256)).convert("L")
    if mode == "P":
        image = image.convert("RGBA" if "transparency" in image.info else "RGB")
        mode = image.mode
    if mode in ("LA", "PA", "RGBA", "RGBa", "La"):
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    return image.convert("RGB")
