"""Elements and figure crops through the real client."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from ovisocr_loader import OvisParser
from ovisocr_loader.testing import Simulator, make_pdf, next_page_id, page_image


def test_elements_and_figure_crops(ovis_simulator: Simulator, tmp_path: Path):
    pid = next_page_id()
    pdf = make_pdf([page_image(pid, lines=["Figure page"])])
    ovis_simulator.register(pid, '# Results\n\n<img src="images/bbox_100_200_600_500.jpg" />'
                                 "\n\nFigure 1: A chart.")
    parser = OvisParser(base_url=ovis_simulator.base_url, figures="crop", figures_dir=tmp_path)
    page = parser.parse(pdf).pages[0]
    assert [e.kind for e in page.elements] == ["heading", "figure", "caption"]
    figure = page.elements[1]
    assert figure.pixel_bbox == (128, 330, 765, 825)          # 1275x1650 page image
    assert figure.pdf_bbox == (61.2, 158.4, 367.2, 396.0)     # Letter points, top-left origin
    crop = Image.open(io.BytesIO(figure.image_png or b""))
    assert crop.size == (765 - 128, 825 - 330)
    assert figure.image_path is not None and Path(figure.image_path).parent == tmp_path
    assert Path(figure.image_path).read_bytes() == figure.image_png
