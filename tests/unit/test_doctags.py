"""DocTags pages (SmolDocling, Granite-Docling) and their OTSL tables read as the same
elements as Markdown; the format as docling-core writes it (elements with four
location tokens on a 0-500 grid, OTSL cells, captions inside tables and pictures)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ovisocr_loader import PageResult, ParsedDocument, chunk_document
from ovisocr_loader.elements import parse_page
from ovisocr_loader.elements.doctags import is_doctags
from ovisocr_loader.elements.otsl import parse_otsl
from ovisocr_loader.eval.words import words

from .markdown_invariants import lost_words


def loc(left: int, top: int, right: int, bottom: int) -> str:
    return f"<loc_{left}><loc_{top}><loc_{right}><loc_{bottom}>"


TABLE = (f"<otsl>{loc(50, 130, 450, 200)}<ecel><ched>Years Ended<lcel><nl>"
         "<ecel><ched>2019<ched>2018<nl><rhed>Wireless<fcel>1,320<fcel>1,086<nl>"
         f"<rhed>Total<fcel>2,000<fcel>1,900<nl><caption>{loc(50, 205, 450, 215)}"
         "Table 1. Revenue by segment</caption></otsl>")
ITEMS = [
    f"<page_header>{loc(20, 10, 200, 20)}ACME Corp annual report</page_header>",
    f"<title>{loc(50, 40, 450, 60)}Results of operations</title>",
    f"<section_header_level_1>{loc(50, 70, 300, 80)}Revenue</section_header_level_1>",
    f"<text>{loc(50, 90, 450, 120)}Revenue grew by 12% in 2019, as shown below.</text>",
    TABLE,
    f"<unordered_list><list_item>{loc(50, 220, 450, 230)}first point</list_item>"
    f"<list_item>{loc(50, 230, 450, 240)}second point</list_item></unordered_list>",
    f"<ordered_list><list_item>{loc(50, 250, 450, 260)}step one</list_item>"
    f"<list_item>{loc(50, 260, 450, 270)}step two</list_item></ordered_list>",
    f"<picture>{loc(100, 300, 400, 400)}<bar_chart><caption>{loc(100, 405, 400, 415)}"
    "Figure 2. Sales by region</caption></picture>",
    f"<formula>{loc(100, 420, 400, 430)}E = m c^{{2}}</formula>",
    f"<code>{loc(100, 440, 400, 460)}<_Python_>def f(x):\n    return x + 1</code>",
    f"<page_footer>{loc(240, 480, 260, 490)}7</page_footer>",
]
EXPECTED = [
    ("page_furniture", None, "ACME Corp annual report"),
    ("heading", 1, "Results of operations"),
    ("heading", 2, "Revenue"),
    ("paragraph", None, "Revenue grew by 12% in 2019, as shown below."),
    ("table", None, "Years Ended 2019 | 2018\nWireless was 1,320 in 2019. Wireless was 1,086 "
                    "in 2018.\nTotal was 2,000 in 2019. Total was 1,900 in 2018."),
    ("caption", None, "Table 1. Revenue by segment"),
    ("list", None, "- first point\n- second point"),
    ("list", None, "1. step one\n2. step two"),
    ("figure", None, ""),
    ("caption", None, "Figure 2. Sales by region"),
    ("formula", None, "E = m c^{2}"),
    ("code", None, "def f(x):\n    return x + 1"),
    ("page_furniture", None, "7"),
]


@pytest.mark.parametrize("page", [
    "<doctag>" + "\n".join(ITEMS) + "\n</doctag><end_of_utterance>",   # human-friendly
    "<doctag>" + "".join(ITEMS) + "</doctag>",                          # minified
    "".join(ITEMS),                                                     # no document tag
    "```xml\n<doctag>" + "\n".join(ITEMS) + "</doctag>\n```",                # fenced
])
def test_a_doctags_page_parses_into_the_same_elements_as_markdown(page):
    elements = parse_page(page, 1, width=1000, height=1400, page_size_pt=(500.0, 700.0))
    assert [(e.kind, e.level, e.text) for e in elements] == EXPECTED
    title, table, figure = elements[1], elements[4], elements[8]
    assert title.bbox == (100, 80, 900, 120)      # twice the 0-500 grid: the 0-999 frame
    assert title.pdf_bbox == (50, 56, 450, 84) and figure.bbox == (200, 600, 800, 800)
    assert table.bbox == (100, 260, 900, 400) and elements[5].bbox == (100, 410, 900, 430)
    assert table.table is not None and table.table.header_rows == 2
    assert table.table.rows[:2] == [["", "Years Ended", "Years Ended"], ["", "2019", "2018"]]
    assert elements[10].latex == "E = m c^{2}"
    assert all(e.bbox is not None for e in elements)
    assert "Results of operations" in page[title.span[0]:title.span[1]]
    doc = ParsedDocument(source="d.pdf", pages=[PageResult(page_number=1, markdown=page,
                                                           elements=elements)])
    texts = [e.text for e in elements] + [c.text for c in chunk_document(doc, 64)]
    assert not any(re.search(r"<|loc_|\x00|Python", text) for text in texts)


def test_a_doctags_page_cut_off_mid_table_keeps_its_rows():
    page = "<doctag>" + "".join(ITEMS)
    cut = page[:page.index("<nl><rhed>Total")]
    elements = parse_page(cut, 1)
    table = elements[-1]
    assert table.kind == "table" and table.table is not None and table.table.truncated
    assert table.table.rows[-1] == ["Wireless", "1,320", "1,086"]
    assert [e.kind for e in elements] == ["page_furniture", "heading", "heading", "paragraph",
                                          "table"]


def test_a_table_cut_off_by_the_next_element_ends_there():
    page = (f"<doctag><otsl>{loc(1, 1, 400, 100)}<fcel>a<fcel>b<nl><fcel>c"
            f"<text>{loc(1, 120, 400, 130)}next text</text>")
    elements = parse_page(page, 1)
    assert [(e.kind, e.text) for e in elements] == [("table", "a: b.\nc"),
                                                   ("paragraph", "next text")]
    assert elements[0].table is not None and elements[0].table.truncated


def test_a_table_opened_inside_a_line_of_text_reads_as_text():
    page = (f"<text>{loc(1, 2, 300, 400)}Hello <otsl><fcel>a<fcel>b<nl><fcel>c<fcel>d<nl>"
            "</otsl> world</text>")
    assert [e.text for e in parse_page(page, 1)] == ["Hello a b\nc d\nworld"]


@pytest.mark.parametrize("page", [
    "The <text> tag and <loc_12> are explained below.",
    "A formula with x<y and <b>bold</b> words.",
])
def test_text_that_only_mentions_doctags_is_no_doctags_page(page):
    assert not is_doctags(page)


def test_otsl_spans_repeat_their_cell_and_column_headers_make_the_header():
    parsed = parse_otsl("<otsl><ched>Segment<ched>Q1<lcel><nl><ucel><ched>a<ched>b<nl>"
                        "<fcel>North<fcel>1<fcel>2<nl><srow>East<xcel><xcel><nl></otsl>")
    assert parsed.table.rows == [["Segment", "Q1", "Q1"], ["Segment", "a", "b"],
                                 ["North", "1", "2"], ["East", "East", "East"]]
    assert parsed.table.header_rows == 2 and not parsed.table.truncated
    assert "<thead>" in parsed.table.html and parsed.caption is None


def test_otsl_without_column_headers_infers_them_and_keeps_stray_text():
    parsed = parse_otsl("<otsl>Stray<fcel>Name<fcel>Amount<nl><fcel>Rent<fcel>1,200<nl>"
                        "<fcel>Food<fcel>300<nl>")
    assert parsed.table.rows[0] == ["Stray", "Name", "Amount"]
    assert parsed.table.header_rows == 1 and parsed.table.truncated


def test_an_otsl_caption_before_the_cells_comes_first():
    source = "<otsl><caption>Table 3: Costs</caption><fcel>a<fcel>1<nl></otsl>"
    parsed = parse_otsl(source)
    assert parsed.caption is not None and parsed.caption.text == "Table 3: Costs"
    assert source[slice(*parsed.caption.span)].startswith("<caption>")
    assert parsed.caption.span[0] < parsed.cells_at and parsed.table.rows == [["a", "1"]]


def test_eval_reads_a_doctags_page_as_its_words():
    page = "<doctag>" + "".join(ITEMS) + "</doctag>"
    plain = ("ACME Corp annual report. Results of operations. Revenue. Revenue grew by 12% in "
             "2019, as shown below. Years Ended 2019 2018 Wireless 1,320 1,086 Total 2,000 "
             "1,900 Table 1. Revenue by segment. First point, second point, step one, step "
             "two. Figure 2. Sales by region. E = m c^{2} def f(x): return x + 1. 7")
    assert words(page) == words(plain)


#: element texts: words and characters, no tags and no code fences (a text is read as
#: Markdown, as in every dialect, so a fence in it opens a code block)
DOC_TEXT = st.lists(st.one_of(st.sampled_from(["alpha", "Beta", "12,5", "x", "café", "→"]),
                              st.text(st.characters(blacklist_categories=("Cs",),
                                                    blacklist_characters="<>`~"), max_size=8)),
                    max_size=6).map(" ".join)
TAGS = ["text", "title", "section_header_level_2", "caption", "formula", "page_footer",
        "footnote", "picture", "list_item", "code", "otsl", "ordered_list", "captioned"]


def _element(tag: str, text: str, box: list[int], closed: bool) -> str:
    location = "".join(f"<loc_{n}>" for n in box)
    end = "</{}>".format if closed else (lambda name: "")
    if tag == "otsl":
        cells = "".join(f"<fcel>{word}" + ("<nl>" if i % 2 else "")
                        for i, word in enumerate(text.split()))
        return f"<otsl>{location}{cells}" + end("otsl")
    if tag == "ordered_list":
        items = "".join(f"<list_item>{location}{word}</list_item>" for word in text.split())
        return f"<ordered_list>{items}" + end("ordered_list")
    if tag == "captioned":   # a picture with its caption
        return f"<picture>{location}<logo><caption>{location}{text}</caption>" + end("picture")
    if tag == "code":
        text = f"<_Python_>{text}"
    return f"<{tag}>{location}{text}" + end(tag)


def _clean(elements, page: str) -> bool:
    """No markup (texts hold no ``<`` of their own) and spans inside the page."""
    return all(not re.search(r"[<\x00]|Python", element.text)
               and 0 <= element.span[0] <= element.span[1] <= len(page) for element in elements)


@given(st.lists(st.tuples(st.sampled_from(TAGS), DOC_TEXT,
                          st.lists(st.integers(0, 499), min_size=4, max_size=4),
                          st.booleans()), max_size=8),
       st.booleans(), st.floats(0, 1))
def test_doctags_page_properties(items, minified, cut):
    page = "<doctag>" + ("" if minified else "\n").join(
        _element(tag, text, box, closed) for tag, text, box, closed in items)
    elements = parse_page(page, 1, width=640, height=480)
    assert not lost_words(" \n\n".join(text for _, text, _, _ in items), elements)
    assert _clean(elements, page)
    cut_page = page[:int(len(page) * cut)]   # the token cap may end a page anywhere
    if is_doctags(cut_page):
        assert _clean(parse_page(cut_page, 1, width=640, height=480), cut_page)
