"""Pure size arithmetic: fit a page into the model's pixel bounds.

Kept apart from rendering so that the size of every page can be decided (and
tested) before a single pixel is drawn; that is what keeps a 35000x35000 px page
from ever being rasterised at full size.
"""

from __future__ import annotations

import math


def fit_scale(width: float, height: float, scale: float, min_pixels: int, max_pixels: int) -> float:
    """Return the scale to apply to a ``width`` x ``height`` page.

    Starts from ``scale`` (e.g. dpi/72 for PDF points) and scales the whole page,
    never cropping, so that ``min_pixels <= w*h <= max_pixels`` after rounding.
    """
    if width <= 0 or height <= 0:
        raise ValueError(f"page has no area ({width}x{height})")
    w, h = pixel_size(width, height, scale)
    if w * h > max_pixels:
        scale = math.sqrt(max_pixels / (width * height))
        while _area(width, height, scale) > max_pixels:
            scale *= 0.999
    elif w * h < min_pixels:
        scale = math.sqrt(min_pixels / (width * height))
        while _area(width, height, scale) < min_pixels:
            scale *= 1.001
    return scale


def pixel_size(width: float, height: float, scale: float) -> tuple[int, int]:
    """Pixel size of a page rendered at ``scale`` (at least 1x1)."""
    return max(1, round(width * scale)), max(1, round(height * scale))


def _area(width: float, height: float, scale: float) -> int:
    w, h = pixel_size(width, height, scale)
    return w * h
