"""Encode a rendered page for the request, cheaply, and decide if it is blank.

Lossless PNG at a low zlib level keeps client CPU low; a gray page is sent as a
one-channel image (a third of the pixels to compress).
"""

from __future__ import annotations

from dataclasses import dataclass

from PIL import Image, ImageChops

from .base import RenderedPage
from .png import encode_png, png_data_url, png_from_data_url

#: a channel difference above this counts as colour ...
_COLOUR_DELTA = 24
#: ... when more than this share of pixels shows it.
_COLOUR_SHARE = 0.0005
#: ink is a pixel at least this many levels away from the background level ...
_INK_DELTA = 24
#: ... and a page with fewer ink pixels than this share (or _MIN_INK pixels) is blank.
_INK_SHARE = 1e-5
_MIN_INK = 25
#: images at least this large on both sides are checked for ink on a quarter sample
_SAMPLE_FROM = 256


@dataclass(frozen=True)
class EncodedPage:
    """A page ready to send: its PNG as the ``data:`` URL a request carries (made where
    the page is rendered), and what the result records about the page."""

    page_number: int
    data_url: bytes
    width: int
    height: int
    mode: str
    dpi: float | None
    blank: bool
    page_size_pt: tuple[float, float] | None
    rotation: int = 0

    @property
    def png(self) -> bytes:
        """The PNG itself, decoded from the URL (only cropping figures needs it): one
        copy of the image per page in the render window and across worker pipes."""
        return png_from_data_url(self.data_url)

    @property
    def stored_size(self) -> tuple[int, int]:
        """Width and height of the page as stored (before any turn upright)."""
        turned = self.rotation in (90, 270)
        return (self.height, self.width) if turned else (self.width, self.height)


def encode_page(page: RenderedPage, *, compress_level: int = 2, blank: bool | None = None
                ) -> EncodedPage:
    """Check for ink (unless ``blank`` is already known) and encode as PNG (the image
    is already L or RGB, see page_mode)."""
    image = page.image
    blank = has_no_ink(image) if blank is None else blank
    data_url = png_data_url(encode_png(image, compress_level))
    return EncodedPage(page.page_number, data_url, image.width, image.height,
                       image.mode, page.dpi, blank, page.page_size_pt, page.rotation)


def has_no_ink(image: Image.Image) -> bool:
    """A page with (next to) no ink: a blank page, never sent.

    Counted on every other pixel of every other row of a page-sized image (a third
    of the time of a full histogram); text strokes span two pixels or more at the
    DPIs pages are rendered at, so a short line of text still shows hundreds.
    """
    gray = image if image.mode == "L" else image.convert("L")
    sampled = 4 if min(gray.size) >= _SAMPLE_FROM else 1
    if sampled > 1:
        gray = gray.resize((gray.width // 2, gray.height // 2), Image.Resampling.NEAREST)
    return is_blank(gray.histogram(), gray.width * gray.height, min_ink=_MIN_INK / sampled)


def page_mode(image: Image.Image) -> Image.Image:
    """An owned L image for a page without colour, else an owned RGB image.

    Always returns a new image, so a render buffer behind ``image`` can be freed.
    """
    if image.mode == "L":
        return image.copy()
    return image.convert("RGB" if has_colour(image) else "L")


def has_colour(image: Image.Image) -> bool:
    """True when a visible share of pixels is coloured, counted on every fourth pixel of
    every fourth row: a sample, not an average (averaging blends thin coloured strokes
    into the white around them), and no full-size copy of the page (a 20th of the
    time of converting the page and reducing it)."""
    small = image
    if min(image.size) >= 64:
        small = image.resize((image.width // 4, image.height // 4), Image.Resampling.NEAREST)
    r, g, b = small.convert("RGB").split()
    spread = ImageChops.lighter(ImageChops.difference(r, g), ImageChops.difference(g, b))
    histogram = spread.histogram()
    coloured = sum(histogram[_COLOUR_DELTA:])
    return coloured > _COLOUR_SHARE * small.width * small.height


def is_blank(histogram: list[int], total: int, *, min_ink: float = 25) -> bool:
    """A page is blank when (almost) no pixel differs from the background level.

    The background is the most common gray level; ink is anything at least
    ``_INK_DELTA`` levels lighter or darker. A faint scan or one short line has
    hundreds of ink pixels; dust specks a few (``min_ink`` of them are allowed).
    """
    background = max(range(256), key=histogram.__getitem__)
    ink = sum(histogram[: max(0, background - _INK_DELTA + 1)])
    ink += sum(histogram[min(256, background + _INK_DELTA):])
    return ink < max(min_ink, total * _INK_SHARE)
