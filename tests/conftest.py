"""Shared fixtures: the simulator comes from the ``ovisocr_simulator`` plugin.

``corpus`` points at ``$OVISOCR_TEST_CORPUS`` (default ../shared/corpus) and
skips cleanly where it is absent, so a fresh clone passes on its own.
"""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

#: The property tests run the same examples on every run: a rare junk page must not fail
#: one CI run and pass the next. ``HYPOTHESIS_PROFILE=explore`` searches afresh, with more
#: examples (docs/testing.md); what it finds becomes a fixed test.
settings.register_profile("suite", max_examples=300, derandomize=True, deadline=None)
settings.register_profile("explore", max_examples=4000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

#: The cache is on by default: this run's processes that no test's own setting reaches
#: (Ray's workers, started once for the session) use a folder of the run, never the
#: user's cache; each test then gets an empty one of its own (``own_cache``).
os.environ["OVISOCR_CACHE_DIR"] = tempfile.mkdtemp(prefix="ovisocr-test-cache-")

CORPUS = Path(os.environ.get("OVISOCR_TEST_CORPUS")
              or Path(__file__).resolve().parents[2] / "shared" / "corpus")


@pytest.fixture(autouse=True)
def own_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
              ) -> Path:
    """Each test starts with an empty default cache of its own (the cache is on by
    default): never the user's, never one another test filled."""
    folder = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("OVISOCR_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"real-scan corpus not present at {CORPUS}")
    return CORPUS


def build_pdf(objects: list[bytes]) -> bytes:
    """A hand-made PDF from raw object bodies (object 1 is the catalog)."""
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += (f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n"
            "%%EOF\n").encode()
    return out


def text_page_pdf(text: bytes, *, kids: bytes = b"3 0 R", count: int = 1,
                  page_extra: bytes = b"", extra_objects: tuple[bytes, ...] = ()) -> bytes:
    """A Letter PDF whose page (object 3) shows ``text``; kids may repeat or add objects."""
    content = b"BT /F1 24 Tf 72 700 Td (" + text + b") Tj ET"
    return build_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % count,
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] " + page_extra +
        b"/Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        *extra_objects,
    ])


@pytest.fixture
def bad_page_pdf() -> bytes:
    """Three pages; page 2 is not a page object, so PDFium fails to load it."""
    return text_page_pdf(b"Hello", kids=b"3 0 R 6 0 R 3 0 R", count=3,
                         extra_objects=(b"(not a page)",))


@pytest.fixture
def zero_page_pdf() -> bytes:
    """A valid PDF with no pages, as PDFium itself writes one."""
    import io

    import pypdfium2 as pdfium

    buffer = io.BytesIO()
    pdfium.PdfDocument.new().save(buffer)
    return buffer.getvalue()


@pytest.fixture
def rotated_pdf() -> bytes:
    """One Letter page with /Rotate 90."""
    return text_page_pdf(b"Sideways", page_extra=b"/Rotate 90 ")


@pytest.fixture
def ctrl_c_raises() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt here and in the commands this test starts, as in a
    terminal, even when the test run itself was started with SIGINT ignored (a shell
    runs a background job so; Python then installs no handler, and a child process
    inherits the ignoring, which exec keeps, where a handler is reset to the default)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
