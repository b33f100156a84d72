"""A folder of scans like a real archive: many small files, one long one, some
broken files and some pages whose first request fails. Shared by the Ray tests
and benchmark so both measure the same thing."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .pages import make_pdf, marked_pdf, page_image
from .scripts import Fault, HttpError, Reset, synthetic_markdown
from .server import Simulator

#: What a broken file holds: truncated, empty, and not what its name says.
BROKEN_FILES = {"truncated.pdf": b"%PDF-1.7\n1 0 obj << /Type /Catalog", "empty.pdf": b"",
                "not-an-image.png": b"<html>this is not an image</html>"}


@dataclass
class ScanFolder:
    """The files written, the page answers registered, what each file should yield."""

    root: Path
    pages: dict[Path, list[str]] = field(default_factory=dict)  # readable file -> page texts
    broken: list[Path] = field(default_factory=list)
    faulty_pages: int = 0

    @property
    def page_count(self) -> int:
        return sum(len(texts) for texts in self.pages.values())


def scan_folder(root: Path, sim: Simulator, *, files: int = 32, pages: int = 130,
                long_file: int = 40, fault_every: int = 9) -> ScanFolder:
    """Write ``files`` files under ``root`` holding ``pages`` pages in all: one PDF of
    ``long_file`` pages (to be split), the broken files above, and short PDFs for
    the rest. Every ``fault_every``-th page's first request fails (a reset or a 503)."""
    root.mkdir(parents=True, exist_ok=True)
    folder = ScanFolder(root)
    for name, data in BROKEN_FILES.items():
        (root / name).write_bytes(data)
        folder.broken.append(root / name)
    short = files - len(BROKEN_FILES) - 1
    sizes = [long_file] + [(pages - long_file) // short + (i < (pages - long_file) % short)
                           for i in range(short)]
    faults: list[Fault] = [Reset(after_tokens=5), HttpError(503)]
    for index, size in enumerate(sizes):
        pdf, ids = marked_pdf(size, size=(850, 1100))
        path = root / ("long.pdf" if index == 0 else f"scan-{index:03d}.pdf")
        path.write_bytes(pdf)
        texts = []
        for pid in ids:
            text = synthetic_markdown(str(pid).encode(), tokens=400)
            if pid % fault_every == 0:
                sim.register(pid, text, faults={1: faults[folder.faulty_pages % 2]})
                folder.faulty_pages += 1
            else:
                sim.register(pid, text)
            texts.append(text)
        folder.pages[path] = texts
    return folder


def write_scan(sim: Simulator, path: Path, page_ids: list[int], *, tokens: int = 150) -> None:
    """A PDF at ``path`` of the pages ``page_ids``, each registered with text of its own: a
    scan to edit page by page (write it again with a new id in a page's place: that page
    was rescanned; the others look as they did)."""
    for pid in page_ids:
        sim.register(pid, synthetic_markdown(str(pid).encode(), tokens=tokens))
    path.write_bytes(make_pdf([page_image(pid) for pid in page_ids]))
