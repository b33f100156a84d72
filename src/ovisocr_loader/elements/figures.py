"""Figure stubs ``<img src="images/bbox_L_T_R_B.jpg" />`` into boxes in three frames."""

from __future__ import annotations

import logging
import re

log = logging.getLogger("ovisocr_loader")

#: Tolerates quote and spacing variants and a missing self-closing slash.
FIGURE_TAG = re.compile(
    r"""<img\s+src\s*=\s*["']?images/bbox_(\d+)_(\d+)_(\d+)_(\d+)\.jpg["']?\s*/?>""",
    re.IGNORECASE)


def to_pixels(bbox: tuple[int, int, int, int], width: int, height: int
              ) -> tuple[int, int, int, int]:
    """The card's mapping: ``round(v * size / 1000)``, clamped to the image."""
    left, top, right, bottom = bbox
    return (min(width, max(0, round(left * width / 1000))),
            min(height, max(0, round(top * height / 1000))),
            min(width, max(0, round(right * width / 1000))),
            min(height, max(0, round(bottom * height / 1000))))


def to_points(bbox: tuple[int, int, int, int], page_size_pt: tuple[float, float]
              ) -> tuple[float, float, float, float]:
    """PDF points, origin top-left of the displayed page, y down."""
    pw, ph = page_size_pt
    left, top, right, bottom = bbox
    return (round(left * pw / 1000, 2), round(top * ph / 1000, 2),
            round(right * pw / 1000, 2), round(bottom * ph / 1000, 2))


def valid_box(bbox: tuple[int, int, int, int]) -> bool:
    """Drop empty or inverted boxes (the card skips x2 <= x1 or y2 <= y1)."""
    left, top, right, bottom = bbox
    if right <= left or bottom <= top:
        log.warning("dropping empty or inverted figure box %s", bbox)
        return False
    return True
