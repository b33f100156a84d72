"""Rendering in worker processes (``render_workers``): the same pages, the same errors."""

from __future__ import annotations

from pathlib import Path

from ovisocr_loader import OvisParser
from ovisocr_loader.config import RenderSettings
from ovisocr_loader.sources import load_input, open_source
from ovisocr_loader.sources.render import render_page
from ovisocr_loader.sources.render_workers import default_render_workers, render_in_worker
from ovisocr_loader.testing import Simulator, marked_pdf


def test_a_worker_renders_the_page_a_thread_renders(tmp_path: Path):
    pdf, _ = marked_pdf(2)
    path = tmp_path / "scan.pdf"
    path.write_bytes(pdf)
    settings = RenderSettings(dpi=100)
    source = open_source(load_input(path), settings)
    for number in (1, 2):
        assert render_in_worker(str(path), None, "scan.pdf", number, settings) == \
            render_page(source, number, settings)
    source.close()


def test_worker_processes_parse_every_page_and_name_a_bad_one(
        ovis_simulator: Simulator, tmp_path: Path, bad_page_pdf: bytes):
    pdf, ids = marked_pdf(6)
    (tmp_path / "scan.pdf").write_bytes(pdf)
    (tmp_path / "fuzzed.pdf").write_bytes(bad_page_pdf)
    for n, page_id in enumerate(ids, 1):
        ovis_simulator.register(page_id, f"Page {n} text.")
    runs = {}
    for workers in (2, 0):   # processes, then threads: the same results
        parser = OvisParser(base_url=ovis_simulator.base_url, render_workers=workers)
        runs[workers] = {Path(d.source).name: d for d in parser.parse_many(
            [tmp_path / "scan.pdf", tmp_path / "fuzzed.pdf"])}
    docs = runs[2]
    assert [p.markdown for p in docs["scan.pdf"].pages] == [
        f"Page {n} text." for n in range(1, 7)]
    bad = docs["fuzzed.pdf"].pages[1]
    assert bad.error is not None and bad.error.kind == "CorruptFileError"
    assert bad.error == runs[0]["fuzzed.pdf"].pages[1].error   # pickled whole
    assert docs["fuzzed.pdf"].pages[0].error is None   # the other pages are read


def test_the_default_leaves_two_cores():
    assert 0 <= default_render_workers() <= 8
