"""Image references in page Markdown, and figure boxes in three frames.

Models mark figures in several dialects; all of them become figures:

- OvisOCR2's stub ``<img src="images/bbox_L_T_R_B.jpg" />`` (0-999 frame of the page image);
- any other ``<img ...>`` tag, alone or inside ``<div>``/``<center>``/``<p>`` wrappers;
  a file name ``img_in_<kind>_box_L_T_R_B`` encodes a box in page-image pixels;
- Markdown images ``![alt](src "title")``;
- docling's placeholder ``<!-- image -->``.
"""

from __future__ import annotations

import html
import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..config import MAX_PIXELS, MIN_PIXELS
from .drawings import drawing_words

log = logging.getLogger("ovisocr_loader")

Box = tuple[int, int, int, int]
PointBox = tuple[float, float, float, float]
#: Qwen2.5-VL's side granularity: 14-pixel patches, merged two by two
QWEN25_FACTOR = 28

#: One image reference of any dialect (group ``described``, ``tag``, ``md`` or
#: ``placeholder``); Nanonets writes ``<img>a description</img>`` (over lines, too, and
#: maybe as ``<img><description>...</description></img>``).
IMAGE_REF = re.compile(
    r"(?P<described><img>(?P<description>(?:(?!<img\b)[\s\S]){0,2000}?)</img>)"
    r"|(?P<tag><img\b[^<>]*>)"
    r"|(?P<md>!\[(?P<alt>[^\]\n]{0,500})\]\((?P<src>[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)"
    r"(?:\s+[\"'][^\"'\n]*[\"'])?\s*\))"
    r"|(?P<placeholder><!--\s*image\s*-->)",
    re.IGNORECASE)
# digits are bounded: an absurd coordinate is no box (and cannot overflow a float)
_MODEL_BOX = re.compile(r"(?:^|[/_])bbox_(\d{1,6})_(\d{1,6})_(\d{1,6})_(\d{1,6})(?:\.\w+)?$")
_PIXEL_BOX = re.compile(r"img_in_\w*?_?box_(\d{1,6})_(\d{1,6})_(\d{1,6})_(\d{1,6})(?:\.\w+)?$")
_ATTRIBUTE = r"""\b{name}\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'<>/]+))"""


@dataclass(frozen=True)
class ImageRef:
    """What one image reference says: where the image is and, maybe, its box."""

    src: str | None
    alt: str
    model_box: Box | None = None
    pixel_box: Box | None = None


def read_image_ref(match: re.Match[str]) -> ImageRef:
    """The source, alt text and box of a match of :data:`IMAGE_REF`."""
    if match.group("placeholder"):
        return ImageRef(src=None, alt="")
    if match.group("described"):  # the description may hold pseudo-XML: keep its words
        return ImageRef(src=None, alt=drawing_words(match.group("description")))
    if match.group("md"):
        src, alt = match.group("src"), match.group("alt")
    else:
        tag = match.group("tag")
        src, alt = attribute(tag, "src"), attribute(tag, "alt") or ""
    alt = html.unescape(alt).strip()
    if not src:
        return ImageRef(src=None, alt=alt)
    name = src.rsplit("/", 1)[-1]
    model = _MODEL_BOX.search(name)
    pixel = None if model else _PIXEL_BOX.search(name)
    return ImageRef(src=src, alt=alt,
                    model_box=_box(model) if model else None,
                    pixel_box=_box(pixel) if pixel else None)


def attribute(tag: str, name: str) -> str | None:
    """The value of attribute ``name`` in an HTML tag (quoted or not), or None."""
    found = re.search(_ATTRIBUTE.format(name=re.escape(name)), tag, re.IGNORECASE)
    if found is None:
        return None
    return next(g for g in found.groups() if g is not None)


def _box(match: re.Match[str]) -> Box | None:
    box = (int(match.group(1)), int(match.group(2)), int(match.group(3)), int(match.group(4)))
    return box if valid_box(box) else None


def to_pixels(bbox: Box, width: int, height: int) -> Box:
    """The card's mapping: ``round(v * size / 1000)``, clamped to the image."""
    left, top, right, bottom = bbox
    return (min(width, max(0, round(left * width / 1000))),
            min(height, max(0, round(top * height / 1000))),
            min(width, max(0, round(right * width / 1000))),
            min(height, max(0, round(bottom * height / 1000))))


def sent_pixel_boxes(numbers: Sequence[float], sent_size: tuple[int, int]) -> list[Box]:
    """Four absolute coordinates of a Qwen2.5-VL-based model (dots.ocr, Qwen2.5-VL's
    HTML), as a box in the 0-999 frame (in a list: none when they are not four, the image
    size is unknown or the box is empty). They are pixels of the image the model saw:
    the image sent, resized as :func:`qwen25_input_size` says."""
    if len(numbers) != 4 or not all(sent_size):
        return []
    width, height = qwen25_input_size(*sent_size)
    left, top, right, bottom = (max(0, round(n)) for n in numbers)
    box = to_model_frame((left, top, right, bottom), width, height)
    return [box] if valid_box(box) else []


def qwen25_input_size(width: int, height: int, min_pixels: int = MIN_PIXELS,
                      max_pixels: int = MAX_PIXELS) -> tuple[int, int]:
    """The size of the image Qwen2.5-VL sees for one of ``width`` x ``height``: each side
    rounded to a multiple of 28 (14-pixel patches merged two by two), scaled to stay
    within the pixel bounds (those the client sends; a page rendered inside them is
    only rounded), as its image processor (and docling, reading dots.ocr's boxes) does."""
    factor = QWEN25_FACTOR
    new_w, new_h = (max(factor, round(side / factor) * factor) for side in (width, height))
    if new_w * new_h > max_pixels:
        shrink = math.sqrt(width * height / max_pixels)
        new_w, new_h = (max(factor, math.floor(side / shrink / factor) * factor)
                        for side in (width, height))
    elif new_w * new_h < min_pixels:
        grow = math.sqrt(min_pixels / (width * height))
        new_w, new_h = (math.ceil(side * grow / factor) * factor for side in (width, height))
    return new_w, new_h


def to_model_frame(pixel_box: Box, width: int, height: int) -> Box:
    """Pixels back into the 0-999 frame (the inverse of :func:`to_pixels`)."""
    left, top, right, bottom = clamp_pixels(pixel_box, width, height)
    return (min(999, round(left * 1000 / width)), min(999, round(top * 1000 / height)),
            min(999, round(right * 1000 / width)), min(999, round(bottom * 1000 / height)))


def unturn(bbox: Box, rotation: int) -> Box:
    """A 0-999 box on an image turned ``rotation`` degrees clockwise, as the same box
    on the image before the turn (the page as stored)."""
    left, top, right, bottom = bbox
    if rotation == 90:
        return (top, 1000 - right, bottom, 1000 - left)
    if rotation == 180:
        return (1000 - right, 1000 - bottom, 1000 - left, 1000 - top)
    if rotation == 270:
        return (1000 - bottom, left, 1000 - top, right)
    return bbox


def clamp_pixels(box: Box, width: int, height: int) -> Box:
    """A pixel box kept inside a ``width`` x ``height`` image."""
    left, top, right, bottom = box
    return (min(width, left), min(height, top), min(width, right), min(height, bottom))


def to_points(bbox: Box, page_size_pt: tuple[float, float]) -> PointBox:
    """PDF points, origin top-left of the displayed page, y down, clamped to the page."""
    pw, ph = page_size_pt
    left, top, right, bottom = (min(v, 1000) for v in bbox)
    return (round(left * pw / 1000, 2), round(top * ph / 1000, 2),
            round(right * pw / 1000, 2), round(bottom * ph / 1000, 2))


def pixels_to_points(box: Box, width: int, height: int, page_size_pt: tuple[float, float]
                     ) -> PointBox:
    """A box in page-image pixels in PDF points (clamped to the page)."""
    left, top, right, bottom = clamp_pixels(box, width, height)
    pw, ph = page_size_pt
    return (round(left * pw / width, 2), round(top * ph / height, 2),
            round(right * pw / width, 2), round(bottom * ph / height, 2))


def valid_box(bbox: Box) -> bool:
    """Reject empty or inverted boxes (the card skips x2 <= x1 or y2 <= y1); the
    figure itself is kept, without a box."""
    left, top, right, bottom = bbox
    if right <= left or bottom <= top:
        log.warning("ignoring an empty or inverted figure box %s", bbox)
        return False
    return True
