"""Real page Markdown from other document VLMs (../shared/reference/model_outputs),
checked with invariants that do not trust the parser. Skipped where absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ovisocr_loader.elements import parse_page

from .markdown_invariants import check_page

ROOT = Path(os.environ.get(
    "OVISOCR_MODEL_OUTPUTS",
    Path(__file__).resolve().parents[3] / "shared" / "reference" / "model_outputs"))
PAGES = sorted(ROOT.glob("*/*.md")) if ROOT.is_dir() else []


@pytest.mark.skipif(not PAGES, reason=f"model outputs not present at {ROOT}")
@pytest.mark.parametrize("path", PAGES, ids=lambda p: f"{p.parent.name}/{p.name[:40]}")
@pytest.mark.parametrize("max_tokens", [64, 512])
def test_real_page_keeps_every_structure(path: Path, max_tokens: int) -> None:
    markdown = path.read_text(encoding="utf-8")
    elements = parse_page(markdown, 1, width=1240, height=1754, page_size_pt=(595.0, 842.0))
    check_page(markdown, elements, max_tokens)
