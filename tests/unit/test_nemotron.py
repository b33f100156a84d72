"""Nemotron Parse pages (``<x_..><y_..>BODY<x_..><y_..><class_..>`` blocks, the format as
docling's parsers read it) as the same elements as Markdown."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ovisocr_loader.elements import parse_page
from ovisocr_loader.elements.nemotron import is_nemotron_page
from ovisocr_loader.eval.words import words

from .markdown_invariants import lost_words
from .test_dialects import FRAGMENTS, WORDS


def block(body: str, name: str, top: float = 0.1) -> str:
    return f"<x_0.1><y_{top}>{body}<x_0.9><y_{top + 0.02:.2f}><class_{name}>"


PAGE = "".join([
    block("ACME Corp", "Page-header", 0.03),
    block("# Annual Report 2019", "Title"),
    block("### 1.2 Revenue", "Section-header"),
    block("Results", "Section-header"),
    block("Revenue grew by 12%<tbc> in 2019.", "Text"),
    block("- first point", "List-item"),
    block("- second point", "List-item"),
    block("\\begin{tabular}{lr}\nSegment & 2019 \\\\\n\\hline\nWireless & 1,320 \\\\\n"
          "\\end{tabular}", "Table"),
    block("Table 1: Revenue by segment", "Caption"),
    block("$$E = mc^2$$", "Formula"),
    block('<chart type="bar">\n| Region | Sales |\n|---|---|\n| North | 12 |', "Chart"),
    block("7", "Page-footer", 0.95),
])


def test_a_nemotron_parse_page_reads_as_the_same_elements():
    elements = parse_page(PAGE, 1, width=1000, height=1400)
    assert [(e.kind, e.level, e.text) for e in elements] == [
        ("page_furniture", None, "ACME Corp"),
        ("heading", 1, "Annual Report 2019"),
        ("heading", 3, "1.2 Revenue"),           # as deep as its # marks
        ("heading", 2, "Results"),               # none: level 2
        ("paragraph", None, "Revenue grew by 12% in 2019."),
        ("list", None, "- first point\n- second point"),
        ("table", None, "Segment | 2019\nWireless was 1,320 in 2019."),
        ("caption", None, "Table 1: Revenue by segment"),
        ("formula", None, "$$E = mc^2$$"),
        ("table", None, "Region | Sales\nNorth Sales: 12."),
        ("page_furniture", None, "7")]
    assert all(e.bbox is None for e in elements)   # the frame depends on the model version
    assert "Annual Report 2019" in PAGE[slice(*elements[1].span)]


def test_a_nemotron_page_cut_off_keeps_its_last_block():
    cut = PAGE[:PAGE.index("second point") + 6]
    elements = parse_page(cut, 1)
    # the last block's class is unknown: a block of its own
    assert [e.text for e in elements][-2:] == ["- first point", "- second"]
    assert not any("<" in e.text for e in elements)


@pytest.mark.parametrize("page", [
    "The ratio <x_1> is small.", "Use <class_Title> for titles.", "<x_0.1><y_0.2> alone",
])
def test_text_that_only_looks_like_nemotron_output_is_no_nemotron_page(page):
    assert not is_nemotron_page(page)


CLASSES = ["Text", "Title", "Section-header", "List-item", "Caption", "Formula", "Table",
           "Picture", "Page-header", "Page-footer", "Footnote", "Code", "Chart"]


@given(st.lists(st.tuples(st.lists(st.one_of(FRAGMENTS, WORDS), max_size=8).map("".join),
                          st.sampled_from(CLASSES)), max_size=8),
       st.floats(0, 1))
def test_nemotron_page_properties(blocks, cut):
    page = "".join(block(body, name) for body, name in blocks)
    elements = parse_page(page, 1, width=640, height=480)
    # the bodies are Markdown, read as one page of blocks
    assert not lost_words("\n\n".join(body for body, _ in blocks), elements)
    for element in elements:
        assert not re.search(r"<[xy]_\d|<class_|\x00", element.text)
    parse_page(page[:int(len(page) * cut)], 1, width=640, height=480)   # never raises


def test_eval_reads_a_nemotron_page_as_its_words():
    page = block("# Annual Report", "Title") + block("Revenue \\<|unk|\\> grew<tbc>.", "Text")
    assert words(page) == words("Annual Report. Revenue grew.")
