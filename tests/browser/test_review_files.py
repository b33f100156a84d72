"""The review site's files, without a browser: safe table HTML, saved JSON as input."""

from __future__ import annotations

from pathlib import Path

from ovisocr_loader.cli import main
from ovisocr_loader.review.sanitize import safe_table_html
from ovisocr_loader.testing import Simulator, marked_pdf

from .conftest import Reviewed


def test_table_html_keeps_structure_and_spans_only() -> None:
    html = safe_table_html('<table style="x"><tr><td rowspan="2" onclick="evil()">a<b>b</b>'
                           '<img src="http://x/y.png"></td><td colspan="huge">c</td></tr>'
                           "<script>alert(1)</script><!-- note --></table>")
    assert html == '<table><tr><td rowspan="2">ab</td><td>c</td></tr></table>'


def test_the_site_marks_pages_elements_and_flags(reviewed: Reviewed) -> None:
    pages = sorted(reviewed.site.glob("*.html"))
    assert [p.name for p in pages] == ["001-report.pdf.html", "002-fax.pdf.html",
                                       "003-memo.tif.html", "index.html"]
    report = pages[0].read_text()
    for marker in ('data-page="1"', 'data-page="3" data-flag="blank"',
                   'data-flag="loop_trimmed"', 'data-kind="heading"', 'data-kind="table"',
                   'data-kind="formula"', 'data-kind="figure"', "Content-Security-Policy"):
        assert marker in report
    assert "http://" not in report and "https://" not in report
    assert "turned 270° clockwise" in pages[1].read_text()


def test_saved_json_is_reviewed_without_the_server(tmp_path: Path) -> None:
    pdf, ids = marked_pdf(2)
    (tmp_path / "a.pdf").write_bytes(pdf)
    with Simulator() as sim:
        sim.register(ids[0], "# Saved\n\nFirst page.")
        assert main(["parse", str(tmp_path / "a.pdf"), "-o", str(tmp_path / "out"),
                     "--format", "json", "--base-url", sim.base_url, "--no-progress"]) == 0
        sent = len(sim.requests)
        assert main(["review", str(tmp_path / "out" / "a.json"), "-o",
                     str(tmp_path / "site"), "--base-url", sim.base_url]) == 0
        assert len(sim.requests) == sent
    html = (tmp_path / "site" / "001-a.pdf.html").read_text()
    assert "Saved" in html and html.count("<img ") == 2   # images from the source file
    (tmp_path / "a.pdf").unlink()                          # the source is gone: text only
    assert main(["review", str(tmp_path / "out" / "a.json"), "-o",
                 str(tmp_path / "site2")]) == 0
    assert "page image not available" in (tmp_path / "site2" / "001-a.pdf.html").read_text()
