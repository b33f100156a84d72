import pytest

from ovisocr_loader.config import MAX_PIXELS, MIN_PIXELS
from ovisocr_loader.sources.geometry import fit_scale, pixel_size


@pytest.mark.parametrize(("w", "h", "expected"), [
    (612, 792, (1275, 1650)),          # Letter at 150 DPI
    (595.276, 841.89, (1240, 1754)),   # A4 at 150 DPI
])
def test_150_dpi_page_sizes(w, h, expected):
    assert pixel_size(w, h, fit_scale(w, h, 150 / 72, MIN_PIXELS, MAX_PIXELS)) == expected


@pytest.mark.parametrize(("w", "h"), [
    (8400, 8400), (234, 14295), (2160, 2160), (144, 18), (10, 10), (200, 213), (3, 5000),
])
def test_every_page_lands_inside_the_pixel_bounds(w, h):
    pw, ph = pixel_size(w, h, fit_scale(w, h, 150 / 72, MIN_PIXELS, MAX_PIXELS))
    assert MIN_PIXELS <= pw * ph <= MAX_PIXELS
    # scaled, never cropped: the aspect ratio is kept (within rounding)
    assert abs(pw / ph - w / h) / (w / h) < 0.02 or min(pw, ph) < 50


def test_zero_area_page_is_rejected():
    with pytest.raises(ValueError):
        fit_scale(0, 100, 2.0, MIN_PIXELS, MAX_PIXELS)
