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


def test_a_doctags_model_through_the_client(tmp_path: Path):
    """Granite-Docling (served by vLLM, asked with docling's prompt) answers DocTags:
    the same elements, boxes on the 0-500 grid mapped onto the page image."""
    pid = next_page_id()
    pdf = make_pdf([page_image(pid, lines=["DocTags page"])])
    doctags = ("<doctag><section_header_level_1><loc_50><loc_40><loc_450><loc_60>Results"
               "</section_header_level_1><picture><loc_50><loc_100><loc_300><loc_250>"
               "<bar_chart></picture><otsl><loc_50><loc_300><loc_450><loc_400><ecel>"
               "<ched>2019<nl><fcel>Revenue<fcel>1,320<nl></otsl>")
    with Simulator(model="ibm-granite/granite-docling-258M") as docling:
        docling.register(pid, doctags)
        parser = OvisParser(base_url=docling.base_url, prompt="docling", figures="crop",
                            figures_dir=tmp_path)
        page = parser.parse(pdf).pages[0]
        assert {r.prompt for r in docling.completions()} == {"Convert this page to docling."}
    assert [(e.kind, e.text) for e in page.elements] == [
        ("heading", "Results"), ("figure", ""), ("table", "2019\nRevenue was 1,320 in 2019.")]
    figure, table = page.elements[1], page.elements[2]
    assert figure.bbox == (100, 200, 600, 500)                 # twice the 0-500 grid
    assert figure.pixel_bbox == (128, 330, 765, 825)          # 1275x1650 page image
    assert Image.open(io.BytesIO(figure.image_png or b"")).size == (765 - 128, 825 - 330)
    assert table.table is not None and table.table.rows == [["", "2019"], ["Revenue", "1,320"]]
