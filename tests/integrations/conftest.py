"""A small directory of generated scans served by the simulator, for both adapters."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from PIL import Image

from ovisocr_loader.testing import Simulator, make_pdf, make_tiff, next_page_id, page_image

TABLE = ("<table><tr><th>Vessel</th><th>Tonnage</th></tr>"
         "<tr><td>Aurora</td><td>1200</td></tr><tr><td>Borealis</td><td>950</td></tr></table>")

REPORT = [
    "# Harbour report\n\nThe harbour authority dredged the northern basin in spring.\n\n"
    "## Fleet",
    "The fleet register lists every vessel by tonnage.\n\n" + TABLE + "\n\n"
    '<img src="images/bbox_100_600_500_900.jpg" />\n\nFigure 1: Map of the basin.',
    "## Outlook\n\nNext year the quay walls will be repaired.",
]
FAX = ["Fax cover sheet for the customs office.", "Second fax page: manifests attached."]
MEMO = "# Memo\n\nThe pilots' roster changes on Monday."


@dataclass
class Scans:
    """Generated inputs: ``report.pdf`` (3 pages + 1 blank), ``fax.tif`` (2), ``memo.png``."""

    root: Path
    report: Path
    fax: Path
    memo: Path


def _page(simulator: Simulator, markdown: str, label: str) -> Image.Image:
    pid = next_page_id()
    simulator.register(pid, markdown)
    return page_image(pid, lines=[label])


@pytest.fixture
def scans(ovis_simulator: Simulator, tmp_path: Path) -> Scans:
    root = tmp_path / "scans"
    root.mkdir()
    pages = [_page(ovis_simulator, text, f"Report {n}") for n, text in enumerate(REPORT, 1)]
    pages.append(Image.new("L", (1275, 1650), 255))  # a blank last page: never sent
    (root / "report.pdf").write_bytes(make_pdf(pages))
    fax = [_page(ovis_simulator, text, f"Fax {n}") for n, text in enumerate(FAX, 1)]
    (root / "fax.tif").write_bytes(make_tiff(fax, fax=True, dpi=200))
    _page(ovis_simulator, MEMO, "Memo").save(root / "memo.png", dpi=(150, 150))
    return Scans(root, root / "report.pdf", root / "fax.tif", root / "memo.png")
