"""Sources on generated files: sizes, formats, orientation, bad input, blank pages."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image
from reportlab.lib.pagesizes import A4, letter
from reportlab.pdfgen import canvas

from ovisocr_loader.config import MAX_PIXELS, MIN_PIXELS, RenderSettings
from ovisocr_loader.errors import (
    CorruptFileError,
    EmptyDocumentError,
    PasswordRequiredError,
    SourceError,
    UnsupportedFormatError,
)
from ovisocr_loader.sources import encode_page, load_input, open_source
from ovisocr_loader.sources.pdf import REOPEN_EVERY
from ovisocr_loader.testing import (
    make_pdf,
    make_tiff,
    next_page_id,
    page_image,
    read_page_id,
    write_pdf,
)

SETTINGS = RenderSettings()


def _open(data, **kw):
    return open_source(load_input(data, name=kw.pop("name", "doc")), SETTINGS, **kw)


def _vector_pdf(sizes, *, encrypt=None, text="Hello") -> bytes:
    buffer = io.BytesIO()
    c = canvas.Canvas(buffer, encrypt=encrypt)
    for size in sizes:
        c.setPageSize(size)
        c.drawString(72, 72, text)
        c.showPage()
    c.save()
    return buffer.getvalue()


def test_letter_and_a4_at_150_dpi():
    src = _open(_vector_pdf([letter, A4]))
    sizes = [src.render(n).image.size for n in src.page_numbers]
    assert sizes == [(1275, 1650), (1240, 1754)]
    page = encode_page(src.render(1))
    assert page.dpi == pytest.approx(150)
    assert page.page_size_pt == pytest.approx((612, 792))


def test_rotate_attribute_is_honoured(rotated_pdf: bytes):
    page = encode_page(_open(rotated_pdf).render(1))
    assert (page.width, page.height) == (1650, 1275)
    assert page.page_size_pt == pytest.approx((792, 612))


@pytest.mark.parametrize(("size_pt", "bound"), [((8400, 8400), "max"), ((144, 18), "min"),
                                                 ((234, 14295), "max"), ((30, 40), "min")])
def test_huge_and_tiny_pages_fit_the_pixel_bounds(size_pt, bound):
    src = _open(_vector_pdf([size_pt]))
    w, h = src.render(1).image.size
    assert MIN_PIXELS <= w * h <= MAX_PIXELS
    if bound == "max":
        assert w * h > 0.99 * MAX_PIXELS
    else:
        assert w * h < 1.01 * MIN_PIXELS


def test_page_selection_and_out_of_range():
    src = _open(_vector_pdf([letter] * 5), pages=[4, 2])
    assert src.page_numbers == [2, 4]
    with pytest.raises(SourceError, match="out of range"):
        _open(_vector_pdf([letter]), pages=[3])


def test_password_pdf(tmp_path: Path):
    path = tmp_path / "secret.pdf"
    path.write_bytes(_vector_pdf([letter], encrypt="s3cret"))
    with pytest.raises(PasswordRequiredError, match="secret.pdf"):
        open_source(load_input(path), SETTINGS)
    with pytest.raises(PasswordRequiredError, match="wrong password"):
        open_source(load_input(path), SETTINGS, password="nope")
    src = open_source(load_input(path), SETTINGS, password="s3cret")
    assert src.render(1).image.size == (1275, 1650)


@pytest.mark.parametrize(("name", "data", "error", "message"), [
    ("notes.pdf", b"hello, I am text", CorruptFileError, "not a PDF"),
    ("broken.pdf", b"%PDF-1.4\n%%EOF\n", CorruptFileError, "cannot open PDF"),
    ("sheet.xlsx", b"PK\x03\x04 zip", UnsupportedFormatError, "unsupported file type"),
])
def test_bad_input_names_the_file(tmp_path: Path, name, data, error, message):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(error, match=message) as info:
        open_source(load_input(path), SETTINGS)
    assert name in str(info.value)


def test_missing_empty_and_zero_page_inputs(tmp_path: Path, zero_page_pdf: bytes):
    with pytest.raises(SourceError, match="missing.pdf: file not found"):
        load_input(tmp_path / "missing.pdf")
    (tmp_path / "empty.pdf").write_bytes(b"")
    with pytest.raises(EmptyDocumentError, match="empty.pdf"):
        load_input(tmp_path / "empty.pdf")
    with pytest.raises(EmptyDocumentError, match="zero.pdf: PDF has no pages"):
        _open(zero_page_pdf, name="zero.pdf")
    with pytest.raises(UnsupportedFormatError):
        load_input(12345)  # type: ignore[arg-type]


def test_a_page_that_fails_to_load_names_file_and_page(bad_page_pdf: bytes):
    src = _open(bad_page_pdf, name="fuzzed.pdf")
    assert src.page_count == 3
    src.render(1)
    with pytest.raises(CorruptFileError, match="fuzzed.pdf page 2: cannot load page"):
        src.render(2)
    src.render(3)


def test_inputs_from_path_bytes_and_file_object(tmp_path: Path):
    data = _vector_pdf([letter])
    path = tmp_path / "a.pdf"
    path.write_bytes(data)
    from_path = load_input(path)
    from_bytes = load_input(data)
    with path.open("rb") as fh:
        from_stream = load_input(fh)
    assert from_path.sha256 == from_bytes.sha256 == from_stream.sha256
    assert from_stream.name.endswith("a.pdf")
    assert from_bytes.name == "<bytes>"


def _image_bytes(image: Image.Image, fmt: str, **kw) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **kw)
    return buffer.getvalue()


def test_multi_frame_fax_tiff_is_one_page_per_frame():
    frames = [page_image(lines=[f"Frame {i}"], size=(2550, 3300), font_size=60)
              for i in range(3)]
    src = _open(make_tiff(frames, fax=True, dpi=300))
    assert src.page_count == 3
    page = encode_page(src.render(3))
    assert (page.width, page.height) == (1275, 1650)  # 300 DPI fax brought to 150 DPI
    assert page.mode == "L"
    assert page.dpi == pytest.approx(150)
    assert not page.blank


def test_cmyk_jpeg_and_exif_orientation():
    image = page_image(lines=["CMYK"], size=(800, 1000), colour=True).convert("CMYK")
    cmyk = _open(_image_bytes(image, "JPEG")).render(1).image
    assert cmyk.mode in ("RGB", "L")
    portrait = page_image(lines=["rotated"], size=(1000, 700))
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 CW on display
    rotated = _open(_image_bytes(portrait, "JPEG", exif=exif)).render(1).image
    assert rotated.size[0] < rotated.size[1]


@pytest.mark.parametrize("fmt", ["PNG", "WEBP", "BMP", "GIF"])
def test_image_formats(fmt):
    image = page_image(lines=["format test"], size=(900, 1200), colour=True)
    data = _image_bytes(image, fmt, **({"lossless": True} if fmt == "WEBP" else {}))
    src = _open(data)
    assert src.page_count == 1
    assert src.render(1).image.size == (900, 1200)


def test_gif_uses_the_first_frame_only():
    frames = [page_image(lines=[f"frame {i}"], size=(600, 800)).convert("P") for i in range(3)]
    data = _image_bytes(frames[0], "GIF", save_all=True, append_images=frames[1:])
    assert _open(data).page_count == 1


def test_transparent_png_is_composited_on_white():
    image = Image.new("RGBA", (700, 700), (0, 0, 0, 0))
    rendered = _open(_image_bytes(image, "PNG")).render(1).image
    assert rendered.getextrema() in ((255, 255), ((255, 255),) * 3)


def test_image_without_dpi_is_brought_to_page_size():
    image = page_image(lines=["big"], size=(2550, 3300), font_size=60)
    w, h = _open(_image_bytes(image, "PNG")).render(1).image.size
    assert w * h <= 8.5 * 11.69 * 150 * 150 * 1.01
    assert abs(w / h - 2550 / 3300) < 0.01


def test_pdf_of_scanned_pages_renders_each_page():
    pages = [page_image(lines=[f"p{i}"]) for i in range(4)]
    src = _open(make_pdf(pages, dpi=150))
    assert src.page_count == 4
    assert src.render(4).image.size == (1275, 1650)


def test_gray_page_is_sent_as_one_channel_and_colour_as_rgb():
    gray = encode_page(_open(make_pdf([page_image(lines=["gray"])])).render(1))
    lines = ["Blue ink on a form"] * 4
    colour = encode_page(_open(make_pdf([page_image(lines=lines, colour=True)])).render(1))
    assert gray.mode == "L" and colour.mode == "RGB"
    decoded = Image.open(io.BytesIO(gray.png))
    assert decoded.format == "PNG" and decoded.mode == "L"



def _drawn_pdf(draw) -> bytes:
    buffer = io.BytesIO()
    c = canvas.Canvas(buffer, pagesize=letter)
    draw(c)
    c.showPage()
    c.save()
    return buffer.getvalue()


def _red_text(c) -> None:
    c.drawString(72, 700, "Black text")
    c.setFillColorRGB(0.8, 0, 0)
    c.drawString(72, 680, "and one red line")


def _gray_scan_with_red_stamp(c) -> None:
    c.drawInlineImage(page_image(lines=["scanned text"], size=(400, 520)), 0, 0, 612, 792)
    c.setStrokeColorRGB(0, 0, 0.9)
    c.rect(400, 700, 120, 40)


@pytest.mark.parametrize(("pdf", "gray"), [
    (lambda: make_pdf([page_image(lines=["a gray scan"])]), True),
    (lambda: make_pdf([page_image(lines=["a colour scan"] * 4, colour=True)]), False),
    (lambda: _vector_pdf([letter]), True),
    (lambda: _drawn_pdf(_red_text), False),
    (lambda: _drawn_pdf(_gray_scan_with_red_stamp), False),
])
def test_pages_that_draw_only_gray_are_known_before_rendering(pdf, gray):
    # such pages are drawn straight into a one-channel bitmap; a page with any colour
    # (an image, text or a stroke) must not be, or its colour would be lost
    import pypdfium2 as pdfium

    from ovisocr_loader.sources.pdf import _draws_only_gray

    document = pdfium.PdfDocument(pdf())
    assert _draws_only_gray(document[0]) is gray
    assert encode_page(_open(pdf()).render(1)).mode == ("L" if gray else "RGB")

@pytest.mark.parametrize(("lines", "blank"), [
    ([], True),
    (["x"], False),                                   # a single short mark
    (["Signed: J. Doe"], False),
])
def test_blank_detection(lines, blank):
    page = page_image(lines=lines, size=(1275, 1650), font_size=18)
    assert encode_page(_open(make_pdf([page])).render(1)).blank is blank


def test_faint_scan_and_noisy_blank():
    faint = Image.new("L", (1275, 1650), 235)
    from PIL import ImageDraw
    ImageDraw.Draw(faint).text((100, 100), "faint pencil note", fill=200,
                               font_size=30)
    assert not encode_page(_open(make_pdf([faint])).render(1)).blank
    noisy = Image.new("L", (1275, 1650), 250)
    for x, y in [(10, 10), (500, 900), (1200, 1600)]:  # three specks of dust
        noisy.putpixel((x, y), 120)
    assert encode_page(_open(make_pdf([noisy])).render(1)).blank


def test_long_pdfs_are_reopened_and_still_render_every_page(tmp_path: Path):
    # PDFium keeps parsed page objects until the document closes; the source reopens it
    # every REOPEN_EVERY pages. Pages after a reopen must be the right ones, also when
    # the document is encrypted or given as bytes.
    count = REOPEN_EVERY + 6
    ids = [next_page_id() for _ in range(count)]
    buffer = io.BytesIO()
    write_pdf(buffer, (page_image(pid, size=(400, 520)) for pid in ids), dpi=50)
    src = _open(buffer.getvalue())
    assert [read_page_id(src.render(n).image) for n in src.page_numbers] == ids

    path = tmp_path / "secret.pdf"
    path.write_bytes(_vector_pdf([letter] * (REOPEN_EVERY + 2), encrypt="s3cret"))
    secret = open_source(load_input(path), SETTINGS, password="s3cret")
    sizes = {secret.render(n).image.size for n in secret.page_numbers}
    assert sizes == {(1275, 1650)}
