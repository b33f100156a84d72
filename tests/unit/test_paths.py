"""``~`` and ``$VARS`` in every path a user gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from ovisocr_loader import OvisParser
from ovisocr_loader.llama_index import OvisReader
from ovisocr_loader.sources import expand_paths, load_input
from ovisocr_loader.testing import make_pdf, page_image


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SCANS", str(tmp_path / "scans"))
    (tmp_path / "scans").mkdir()
    (tmp_path / "scans" / "a.pdf").write_bytes(make_pdf([page_image(1)]))
    return tmp_path


def test_parser_and_reader_expand_their_folders(home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(home / "scans")
    parser = OvisParser(cache_dir="~/.cache/ovisocr", figures_dir="$HOME/crops")
    assert parser.settings.cache_dir == str(home / ".cache" / "ovisocr")
    assert parser.settings.figures_dir == str(home / "crops")
    reader = OvisReader(cache_dir="~/c", figures_dir="~/f")
    assert (reader.cache_dir, reader.figures_dir) == (str(home / "c"), str(home / "f"))
    assert not (home / "scans" / "~").exists()


def test_inputs_expand_home_variables_and_globs(home: Path):
    assert expand_paths(["~/scans/*.pdf"]) == [home / "scans" / "a.pdf"]
    assert expand_paths(["$SCANS"]) == [home / "scans" / "a.pdf"]
    assert load_input("~/scans/a.pdf").kind == "pdf"
    assert load_input("$SCANS/a.pdf").name == "$SCANS/a.pdf"   # named as the user wrote it
