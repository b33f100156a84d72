"""Other models' Markdown dialects: fences, wrappers, image references, table headers,
pipe tables, equation numbers, captions; every page also passes the invariants."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ovisocr_loader import PageResult, ParsedDocument, chunk_document
from ovisocr_loader.elements import parse_page, parse_table
from ovisocr_loader.elements.figures import qwen25_input_size
from ovisocr_loader.elements.normalise import normalise_page

from .markdown_invariants import WRAPPER_MARKUP, check_page, lost_words

TWO_ROW_HEAD = """<table><thead><tr><th rowspan="2">PAHs compounds</th>
<th colspan="3">% Recovery</th></tr><tr><th>Soxtec</th><th>Soxhlet</th><th>PLE</th></tr>
</thead><tbody><tr><td>NAP</td><td>68.3</td><td>65.6</td><td>60.0</td></tr>
<tr><td>ACY</td><td>61.5</td><td>79.6</td><td>70.1</td></tr></tbody></table>"""

FENCED_PAGE = f"""```markdown
# 3. Results

Recoveries are listed below.

{TWO_ROW_HEAD}

$$
E = mc^2
$$

(13)

Table 6 summarizes the recoveries obtained with each method.
```"""

PADDLE_PAGE = ("""<div style="text-align: center;">"""
               """<img src="imgs/img_in_image_box_100_200_500_600.jpg" alt="Image" width="60%" />"""
               """</div>

<div style="text-align: center;">Figure 1: Sampling sites along the coast.</div>

<center>Centered remark about the sites.</center>

<p align="center"><span style="color: red">Warning:</span> values are provisional.</p>

![A map of the bay](imgs/bay.png "The bay")

Fig. 2 shows the bay in winter.""")


def kinds(elements):
    return [e.kind for e in elements]


def test_page_wrapped_in_a_markdown_fence_keeps_its_structure():
    elements = parse_page(FENCED_PAGE, 1)
    assert "code" not in kinds(elements)
    assert kinds(elements) == ["heading", "paragraph", "table", "formula", "paragraph"]
    assert elements[3].equation_number == "13"
    assert elements[4].kind == "paragraph"   # a body sentence, not a caption
    table = elements[2].table
    assert table is not None and table.header_rows == 2
    assert table.column_headers() == ["PAHs compounds", "% Recovery / Soxtec",
                                      "% Recovery / Soxhlet", "% Recovery / PLE"]
    assert table.to_text().splitlines()[:2] == [
        "PAHs compounds | % Recovery Soxtec | Soxhlet | PLE",
        "NAP Soxtec: 68.3. NAP Soxhlet: 65.6. NAP PLE: 60.0."]
    assert table.to_markdown().splitlines()[0].startswith("| PAHs compounds | % Recovery / Sox")
    check_page(FENCED_PAGE, elements)


@pytest.mark.parametrize("opener", ["```md", "```", "~~~markdown", "```Markdown "])
def test_fence_variants_around_markdown_are_unwrapped(opener):
    closer = opener[:3]
    page = f"Intro.\n\n{opener}\n## Section\n\n| a | b |\n|---|---|\n| 1 | 2 |\n{closer}\n\nEnd."
    elements = parse_page(page, 1)
    assert kinds(elements) == ["paragraph", "heading", "table", "paragraph"]
    check_page(page, elements)


@pytest.mark.parametrize("page", [
    "```python\n# a comment\nx = 1\nprint(x)\n```",
    "```\ndef f(x):\n    return x\n```",
    "```bash\npip install ovisocr-loader\n```",
])
def test_real_code_blocks_stay_code(page):
    elements = parse_page(page, 1)
    assert kinds(elements) == ["code"]
    assert "ovisocr-loader" in elements[0].text or "x" in elements[0].text


def test_unclosed_markdown_fence_is_unwrapped_too():
    elements = parse_page("```markdown\n# Title\n\nBody text.", 1)
    assert kinds(elements) == ["heading", "paragraph"]


def test_a_code_block_ends_where_the_block_parser_ends_it():
    """A fence line with text after it ends the code block; what follows is the page's
    and loses its wrapper markup like any other page text."""
    elements = parse_page("```\n```markdown\nIntro.\n<div style='a'>Body</div>", 1)
    assert [(e.kind, e.text) for e in elements] == [
        ("code", "markdown"), ("paragraph", "Intro.\nBody")]


def test_html_fence_holding_a_table_is_a_table():
    page = "```html\n<table><tr><td>a</td><td>1</td></tr></table>\n```"
    assert kinds(parse_page(page, 1)) == ["table"]


def test_every_image_dialect_becomes_a_figure_without_wrapper_markup():
    elements = parse_page(PADDLE_PAGE, 1, width=1000, height=2000,
                          page_size_pt=(500.0, 1000.0))
    assert kinds(elements) == ["figure", "caption", "paragraph", "paragraph", "figure",
                               "paragraph"]
    first = elements[0]
    assert first.src == "imgs/img_in_image_box_100_200_500_600.jpg"
    assert first.pixel_bbox == (100, 200, 500, 600)
    assert first.bbox == (100, 100, 500, 300)
    assert first.pdf_bbox == (50.0, 100.0, 250.0, 300.0)
    assert elements[1].text == "Figure 1: Sampling sites along the coast."
    assert elements[2].text == "Centered remark about the sites."
    assert elements[3].text == "Warning: values are provisional."
    assert elements[4].text == "A map of the bay" and elements[4].src == "imgs/bay.png"
    assert elements[5].kind == "paragraph"   # "Fig. 2 shows ..." is body text
    for element in elements:
        assert not WRAPPER_MARKUP.search(element.text)
    check_page(PADDLE_PAGE, elements)


def test_image_reference_inside_a_paragraph_splits_it():
    page = 'See the chart <img src="images/bbox_10_20_30_40.jpg" /> and the map ![](m.png).'
    elements = parse_page(page, 1)
    assert kinds(elements) == ["paragraph", "figure", "paragraph", "figure", "paragraph"]
    assert elements[1].bbox == (10, 20, 30, 40) and elements[3].src == "m.png"
    check_page(page, elements)


def test_docling_image_placeholder_is_a_figure():
    elements = parse_page("Text.\n\n<!-- image -->\n\n<!-- page break -->\n\nMore.", 1)
    assert kinds(elements) == ["paragraph", "figure", "paragraph"]


def test_absurd_figure_coordinates_never_raise():
    page = f'<img src="images/bbox_0_0_{"9" * 400}_500.jpg" />'
    elements = parse_page(page, 1, width=100, height=100, page_size_pt=(10.0, 10.0))
    assert kinds(elements) == ["figure"] and elements[0].bbox is None


def test_pixel_box_larger_than_the_page_is_clamped():
    page = '<img src="imgs/img_in_chart_box_0_0_5000_5000.jpg" />'
    figure = parse_page(page, 1, width=1000, height=2000, page_size_pt=(500.0, 1000.0))[0]
    assert figure.pixel_bbox == (0, 0, 1000, 2000)
    assert figure.pdf_bbox == (0.0, 0.0, 500.0, 1000.0)


@pytest.mark.parametrize(("html", "header_rows"), [
    # a text first row over numbers: a header
    ("<table><tr><td>Item</td><td>Price</td></tr><tr><td>Tea</td><td>3.50</td></tr>"
     "<tr><td>Cake</td><td>$4</td></tr></table>", 1),
    # years as column titles are still a header
    ("<table><tr><td></td><td>2019</td><td>2020</td></tr>"
     "<tr><td>Sales</td><td>1,200</td><td>1,350</td></tr></table>", 1),
    # a first row spanning columns, with a second row under its row-spanning cells
    ("<table><tr><td rowspan=2>Channel</td><td colspan=2>Growth</td></tr>"
     "<tr><td>23M11</td><td>2023 YTD</td></tr><tr><td>Online</td><td>-21.4%</td>"
     "<td>-8.2%</td></tr></table>", 2),
    # words over words: no header is claimed
    ("<table><tr><td>Name</td><td>Role</td></tr><tr><td>Ann</td><td>Chair</td></tr></table>", 0),
    # a first row holding numbers is data
    ("<table><tr><td>Tea</td><td>3.50</td></tr><tr><td>Cake</td><td>4</td></tr></table>", 0),
])
def test_header_inference_without_thead(html, header_rows):
    assert parse_table(html).header_rows == header_rows


def test_unterminated_table_ends_where_table_markup_stops():
    page = ("<table><tr><td>Item</td><td>Qty</td></tr>\n<tr><td>Bolts</td><td>12</td></tr>\n\n"
            "<tr><td>Nuts</td><td>30\n\nThe order ships on Monday.\n\n## Delivery\n\n"
            "<table><tr><td>a</td></tr></table>")
    elements = parse_page(page, 1)
    assert kinds(elements) == ["table", "paragraph", "heading", "table"]
    table = elements[0].table
    assert table is not None and table.truncated
    assert table.rows[-1] == ["Nuts", "30"] and table.header_rows == 1
    assert not elements[3].table.truncated
    check_page(page, elements)


@pytest.mark.parametrize("page", [
    "| Item | Qty |\n|:-----|----:|\n| Bolts | 12 |\n| Nuts | 30 |",
    "Item | Qty\n--- | ---\nBolts | 12\nNuts | 30",
    "| Item | Qty |\n| Bolts | 12 |\n| Nuts | 30 |",
])
def test_pipe_tables_become_tables(page):
    elements = parse_page(page, 1)
    assert kinds(elements) == ["table"]
    table = elements[0].table
    assert table is not None
    assert table.rows == [["Item", "Qty"], ["Bolts", "12"], ["Nuts", "30"]]
    assert table.header_rows == 1
    assert table.html.startswith("<table><thead><tr><th>Item</th>")
    assert parse_table(table.html).rows == table.rows   # the html is equivalent
    check_page(page, elements)


def test_pipe_table_with_escaped_bars_and_ragged_rows():
    page = "| a | b |\n|---|---|\n| x \\| y | 1 | extra |\n| z |"
    table = parse_page(page, 1)[0].table
    assert table is not None
    assert table.rows == [["a", "b", ""], ["x | y", "1", "extra"], ["z", "", ""]]


@pytest.mark.parametrize(("page", "number"), [
    ("$$\nx = 1\n$$\n\n(13)", "13"),
    ("$$\nx = 1\n$$\n\n\n(2.1a)", "2.1a"),
    ("\\[\nx = 1\n\\]\n[4]", "4"),
    ("$$ x = 1 \\tag{7} $$", "7"),
    ("\\begin{equation}\nx = 1\n\\end{equation}\n(3)", "3"),
    ("$$x = 1$$ (8)", "8"),
])
def test_equation_numbers_join_their_formula(page, number):
    elements = parse_page(page, 1)
    assert kinds(elements) == ["formula"]
    assert elements[0].equation_number == number
    assert "x = 1" in elements[0].latex


@pytest.mark.parametrize(("text", "caption"), [
    ("Figure 3: Throughput.", True),
    ("Fig. 3. Latency.", True),
    ("Table 2 | Results by site", True),
    ("Table 2 — Results by site", True),
    ("**Table 2** Results by site", True),
    ("Table3 Recoveries and relative standard deviations", True),
    ("图 3 侵蚀沟道面积", True),
    ("表 2：各品牌零售端表现", True),
    ("Table 6 summarizes the recoveries obtained with each method.", False),
    ("Fig. 3 shows the latency under load.", False),
    ("Figure 2. " + "A very long paragraph of body text. " * 40, False),
])
def test_captions_are_short_labelled_blocks_next_to_a_figure_or_table(text, caption):
    page = f'<img src="images/bbox_1_1_500_500.jpg" />\n\n{text}'
    assert parse_page(page, 1)[1].kind == ("caption" if caption else "paragraph")


def test_caption_needs_a_neighbouring_figure_or_table():
    assert kinds(parse_page("Intro.\n\nFigure 3: Throughput.\n\nOutro.", 1)) == [
        "paragraph", "paragraph", "paragraph"]


def test_normalisation_keeps_offsets():
    for page in (FENCED_PAGE, PADDLE_PAGE):
        normalised = normalise_page(page)
        assert len(normalised) == len(page)
        assert [i for i, c in enumerate(page) if c == "\n"] == [
            i for i, c in enumerate(normalised) if c == "\n"]


FRAGMENTS = st.sampled_from([
    "# ", "- ", "$$", "\\[", "\\]", "(3)", "[4]", "<table>", "<tr>", "<td>", "</td>",
    "</tr>", "</table>", "<th rowspan=2>", "<td colspan=3>", "<thead>", "</thead>",
    "```", "```markdown", "~~~", "| ", " |", "|---|---|", "<div style='a'>", "</div>",
    "<center>", "</center>", "<p align=center>", "</p>", "<span>", "</span>",
    '<img src="imgs/img_in_image_box_1_2_30_40.jpg" />', "![alt](x.png)", "![](y.jpg)",
    '<img src="images/bbox_1_2_30_40.jpg" />', "<!-- image -->", "Figure 1:", "Table 2",
    "\\tag{5}", "\n", "\n\n", " ", "&amp;",
    # grounding markers, inline cell markup, setext underlines, placeholder references
    "<|ref|>title<|/ref|><|det|>[[10, 10, 500, 40]]<|/det|>\n",
    "<|ref|>image<|/ref|><|det|>[[1, 2, 30, 40], [50, 2, 90, 40]]<|/det|>",
    "<|ref|>table_caption<|/ref|><|det|>[[5, 5, 1, 1]]<|/det|>", "<br>", "<b>", "</b>",
    "<|det|>sub_title [10, 20, 300, 40]<|/det|>", "<|det|>image [1, 2, 30, 40]<|/det|>",
    "<sup>", "</sup>", "<sub>", "</sub>", "**", "\n===\n", "\n---\n",
    "<img>a chart</img>", "[tbl-0.html](tbl-0.html)",
    # semantic tags, front matter
    "<page_number>", "</page_number>", "<watermark>", "</watermark>", "<signature>",
    "</signature>", "---\nprimary_language: en\n---\n",
])
WORDS = st.from_regex(r"[A-Za-z][a-z0-9]{0,7}", fullmatch=True)


@given(st.lists(st.one_of(FRAGMENTS, WORDS), max_size=60).map("".join))
def test_dialect_grammar_properties(page):
    elements = parse_page(page, 1, width=100, height=100, page_size_pt=(72.0, 72.0))
    check_page(page, elements, max_tokens=32)
    for element in elements:
        assert element.pixel_bbox is None or all(0 <= v <= 100 for v in element.pixel_bbox)


def test_setext_headings_of_both_levels_are_headings():
    page = "Annual Report\n=============\n\nIntro.\n\nResults by\nregion\n-------\n\nMore."
    elements = parse_page(page, 1)
    assert [(e.kind, e.level, e.text) for e in elements] == [
        ("heading", 1, "Annual Report"), ("paragraph", None, "Intro."),
        ("heading", 2, "Results by region"), ("paragraph", None, "More.")]
    check_page(page, elements)


def test_a_rule_after_a_blank_line_or_a_list_is_no_heading():
    elements = parse_page("Text.\n\n---\n\n- item\n---", 1)
    assert "heading" not in kinds(elements)


def test_inline_markup_in_cells_becomes_text():
    html = ("<table><tr><th>Model</th><th>Score</th></tr><tr><td>GAME<br>(L=0)</td>"
            "<td><b>9.77</b> m<sup>2</sup> H<sub>2</sub>O <i>est.</i></td></tr></table>")
    (element,) = parse_page(html, 1)
    assert element.table is not None
    assert element.table.rows[1] == ["GAME\n(L=0)", "9.77 m^2 H_2O est."]
    assert element.text.splitlines()[-1] == "GAME (L=0) Score: 9.77 m^2 H_2O est."
    assert element.table.html == html                       # the HTML kept as written
    pipe = "| Model | Score |\n|---|---|\n| GAME<br>(L=0) | **9.77** |\n| snake_case | 2*3*4 |"
    (table,) = parse_page(pipe, 1)
    assert table.table is not None
    assert table.table.rows[1:] == [["GAME\n(L=0)", "9.77"], ["snake_case", "2*3*4"]]
    assert "<" not in table.text and "**" not in table.text


def test_inline_markup_in_prose_reads_as_in_cells():
    """MinerU writes footnote marks and affiliations as <sup> in paragraphs (#51)."""
    page = ("Smith<sup>1</sup>, H<SUB>2</SUB>O and <b>bold</b> <i class=\"x\">it</i>"
            "<br>next, a < b > c, <bold> and <sup>open\n\n# Growth<sup>a</sup>\n\n"
            "- item <strong>x</strong><sub>i</sub>")
    paragraph, heading, items = parse_page(page, 1)
    assert paragraph.text == "Smith^1, H_2O and bold it\nnext, a < b > c, <bold> and <sup>open"
    assert heading.text == "Growth^a" and items.text == "- item x_i"


GROUNDED = """<|ref|>title<|/ref|><|det|>[[120, 45, 880, 90]]<|/det|>
Annual Report 2019

<|ref|>sub_title<|/ref|><|det|>[[120, 100, 600, 115]]<|/det|>
Harbours

<|ref|>text<|/ref|><|det|>[[100, 120, 900, 300]]<|/det|>
The company grew.

<|ref|>image<|/ref|><|det|>[[100, 320, 500, 600], [520, 320, 900, 600]]<|/det|>

<|ref|>image_caption<|/ref|><|det|>[[100, 610, 900, 640]]<|/det|>
Maps of the two harbours.

<|ref|>equation<|/ref|><|det|>[[100, 645, 900, 660]]<|/det|>
E = mc^2

<|ref|>table<|/ref|><|det|>[[100, 650, 900, 900]]<|/det|>
<table><tr><th>Harbour</th><th>Calls</th></tr><tr><td>North</td><td>12</td></tr></table>
"""


def test_grounding_markers_give_kinds_and_boxes():
    elements = parse_page(GROUNDED, 1, width=1000, height=2000, page_size_pt=(500.0, 1000.0))
    assert [(e.kind, e.level) for e in elements] == [
        ("heading", 1), ("heading", 2), ("paragraph", None), ("figure", None),
        ("figure", None), ("caption", None), ("formula", None), ("table", None)]
    title, _, text, left, right, caption, formula, table = elements
    assert title.text == "Annual Report 2019" and title.bbox == (120, 45, 880, 90)
    assert title.pixel_bbox == (120, 90, 880, 180) and title.pdf_bbox == (60, 45, 440, 90)
    assert text.bbox == (100, 120, 900, 300)
    assert (left.bbox, right.bbox) == ((100, 320, 500, 600), (520, 320, 900, 600))  # both kept
    assert caption.text == "Maps of the two harbours." and formula.latex == "E = mc^2"
    assert table.bbox == (100, 650, 900, 900) and table.table is not None
    doc = ParsedDocument(source="g.pdf", pages=[PageResult(
        page_number=1, markdown=GROUNDED, elements=elements)])
    for text in [e.text for e in elements] + [c.text for c in chunk_document(doc, 64)]:
        assert "<|" not in text and "|>" not in text and "det" not in text


#: Unlimited-OCR's grounding (DeepSeek-OCR's labels and boxes, the shape docling reads):
#: each block on the marker's line, blocks one line break apart
UNLIMITED_OCR_PAGE = (
    "<|det|>title [120, 45, 880, 90]<|/det|># Annual Report 2019\n"
    "<|det|>text [100, 120, 900, 300]<|/det|>The fleet grew.\n"
    "<|det|>image [100, 320, 500, 600]<|/det|>\n"
    "<|det|>image_caption [100, 610, 500, 630]<|/det|>Figure 1: Maps of the harbours.\n"
    "<|det|>sub_title [100, 700, 900, 720]<|/det|>Outlook")


def test_unlimited_ocr_grounding_reads_as_deepseek_markers():
    elements = parse_page(UNLIMITED_OCR_PAGE, 1, width=1000, height=2000)
    assert [(e.kind, e.level, e.text, e.bbox) for e in elements] == [
        ("heading", 1, "Annual Report 2019", (120, 45, 880, 90)),
        ("paragraph", None, "The fleet grew.", (100, 120, 900, 300)),
        ("figure", None, "", (100, 320, 500, 600)),
        ("caption", None, "Figure 1: Maps of the harbours.", (100, 610, 500, 630)),
        ("heading", 2, "Outlook", (100, 700, 900, 720))]


def test_text_that_only_looks_like_a_marker_stays_text():
    (paragraph,) = parse_page("Use <|ref|> tokens carefully.", 1)
    assert paragraph.text == "Use <|ref|> tokens carefully." and paragraph.bbox is None


def test_placeholder_references_carry_no_text_into_prose():
    page = ("Intro.\n\n<img>A bar chart of revenue, 2015 to 2019.</img>\n\n"
            "<img><chart><title>Sales</title><x>year</x></chart></img>\n\n"
            "[tbl-0.html](tbl-0.html)\n\n![img-0.jpeg](img-0.jpeg)\n\nEnd.")
    elements = parse_page(page, 1)
    assert [(e.kind, e.text, e.src) for e in elements] == [
        ("paragraph", "Intro.", None),
        ("figure", "A bar chart of revenue, 2015 to 2019.", None),
        ("figure", "Sales year", None),
        ("table", "", "tbl-0.html"),        # a reference: the table is in its own file
        ("figure", "img-0.jpeg", "img-0.jpeg"),
        ("paragraph", "End.", None)]
    doc = ParsedDocument(source="m.pdf", pages=[PageResult(page_number=1, markdown=page,
                                                           elements=elements)])
    (chunk,) = chunk_document(doc)
    assert "tbl-0" not in chunk.text and "</img>" not in chunk.text


@pytest.mark.parametrize("drawing", [
    "<img>\n<description>Bar chart of revenue\nby year.</description>\n</img>",
    "<description>Bar chart of revenue by year.</description>",
    '<svg viewBox="0 0 9 9"><style>.a{fill:red}</style><title>Bar chart</title>\n'
    '  <g><path d="M0 0 L9 9"/>\n\n  <text x="1" y="2">of revenue by year.</text></g>\n</svg>',
], ids=["description over lines in img", "description alone", "svg"])
def test_drawings_and_descriptions_are_figures_described_by_their_words(drawing: str):
    page = f"Intro.\n{drawing}\nEnd of the page."
    elements = parse_page(page, 1)
    assert [e.kind for e in elements] == ["paragraph", "figure", "paragraph"]
    assert " ".join(elements[1].text.split()) == "Bar chart of revenue by year."
    assert elements[2].text == "End of the page."
    doc = ParsedDocument(source="m.pdf", pages=[PageResult(page_number=1, markdown=page,
                                                           elements=elements)])
    (chunk,) = chunk_document(doc)
    assert "<" not in chunk.text and "M0" not in chunk.text and "fill" not in chunk.text


def test_a_description_after_a_figure_describes_it():
    page = ('<img src="images/bbox_100_200_500_600.jpg" />\n'
            "<description>A photo of the harbour.</description>\n\nAfter.")
    figure, after = parse_page(page, 1)
    assert (figure.kind, figure.text, figure.bbox) == (
        "figure", "A photo of the harbour.", (100, 200, 500, 600))
    assert figure.span == (0, page.index("\n\nAfter"))
    assert after.text == "After."


def test_bare_svg_fragments_are_a_figure_never_text():
    page = 'Intro.\n\n<g><path d="M0 0 L10 10 Z"/></g>\n<path d="M1 1"/>\n\nAfter.'
    assert [(e.kind, e.text) for e in parse_page(page, 1)] == [
        ("paragraph", "Intro."), ("figure", ""), ("paragraph", "After.")]


QWEN_HTML = """```html
<html><body>
<h1 data-bbox="120 45 880 90">Annual Report 2019</h1>
<p data-bbox="100 120 900 300">The fleet <b>grew</b> to 5 m<sup>2</sup> of H<sub>2</sub>O
tanks.</p><h2 data-bbox="120 305 600 318">Harbours</h2>
<ul data-bbox="100 320 900 340"><li>North</li><li><i>South</i></li></ul>
<div class="image" data-bbox="100 350 500 600"><img data-bbox="100 350 500 600"/></div>
<p class="caption" data-bbox="100 610 900 640">Figure 1: Maps of the two harbours.</p>
<div class="formula" data-bbox="100 645 900 660">E = mc^2</div>
<table data-bbox="100 665 900 900"><tr><th>Harbour</th><th>Calls</th></tr>
<tr><td>North</td><td>12</td></tr></table>
<address class="footer" data-bbox="400 950 600 980">Harbour Board, 2019</address>
<p data-bbox="100 905 900 940">The survey went on until the"""


def test_an_html_document_page_parses_into_the_same_elements():
    elements = parse_page(QWEN_HTML, 1, width=1000, height=2000, page_size_pt=(500.0, 1000.0))
    assert [(e.kind, e.level, e.text) for e in elements] == [
        ("heading", 1, "Annual Report 2019"),
        ("paragraph", None, "The fleet grew to 5 m^2 of H_2O\ntanks."),
        ("heading", 2, "Harbours"),
        ("list", None, "- North\n- South"),
        ("figure", None, ""),
        ("caption", None, "Figure 1: Maps of the two harbours."),
        ("formula", None, "E = mc^2"),
        ("table", None, "Harbour | Calls\nNorth Calls: 12."),
        ("page_furniture", None, "Harbour Board, 2019"),
        ("paragraph", None, "The survey went on until the")]   # cut off, never closed
    heading, _, _, items, figure, _, formula, table, _, _ = elements
    assert heading.bbox == (120, 45, 880, 90) and heading.pixel_bbox == (120, 90, 880, 180)
    assert heading.pdf_bbox == (60, 45, 440, 90)
    assert items.bbox == (100, 320, 900, 340) and figure.bbox == (100, 350, 500, 600)
    assert formula.latex == "E = mc^2" and table.bbox == (100, 665, 900, 900)
    assert table.table is not None and table.table.rows == [["Harbour", "Calls"], ["North", "12"]]
    assert QWEN_HTML[figure.span[0]:figure.span[1]].startswith('<div class="image"')
    check_page(QWEN_HTML, elements, max_tokens=64)


def test_a_tag_cut_off_at_the_end_of_an_html_document_is_markup():
    page = '<html><body><p data-bbox="1 2 300 40">Last words</p><p data-bbox="1 50'
    (paragraph,) = parse_page(page, 1)
    assert paragraph.text == "Last words"


@pytest.mark.parametrize(("sent", "seen"), [
    ((1300, 1700), (1288, 1708)),     # inside the pixel bounds: sides rounded to 28
    ((1275, 1650), (1288, 1652)),     # a Letter page at 150 DPI
    ((5000, 5000), (2856, 2856)),     # over 2880*2880: scaled down, then rounded
    ((100, 100), (448, 448)),         # under 448*448: scaled up
])
def test_qwen25_sees_an_image_resized_to_multiples_of_28_within_the_pixel_bounds(sent, seen):
    assert qwen25_input_size(*sent) == seen


def test_html_document_boxes_in_pixels_are_scaled_by_the_image_sent():
    # pixels of the image Qwen2.5-VL saw: 1300x1700 sent, seen as 1288x1708 (sides
    # rounded to multiples of 28)
    page = '<html><body><p data-bbox="129 171 1159 1537">Qwen2.5-VL counts pixels.</p>'
    (paragraph,) = parse_page(page, 1, width=1300, height=1700)
    assert paragraph.bbox == (100, 100, 900, 900)
    (unknown,) = parse_page(page, 1)   # no image size: no box rather than a wrong one
    assert unknown.bbox is None and unknown.text == "Qwen2.5-VL counts pixels."


def test_a_markdown_page_with_html_wrappers_is_no_html_document():
    page = '<p align="center">Centred title</p>\n\n# Heading\n\n<b>bold</b> stays'
    assert [(e.kind, e.text) for e in parse_page(page, 1)] == [
        ("paragraph", "Centred title"), ("heading", "Heading"), ("paragraph", "bold stays")]


HTML_FRAGMENTS = st.sampled_from([
    '<h1 data-bbox="10 10 500 40">', "</h1>", "<h3>", "</h3>", '<p data-bbox="10 50 900 90">',
    "</p>", "<p>", '<p class="caption" data-bbox="1 2 300 40">', "<br>", "&amp;",
    '<div class="image" data-bbox="100 100 400 400">', '<img data-bbox="100 100 400 400"/>',
    '<img data-bbox="5 5 1 1">', "</div>", '<ul data-bbox="5 5 50 50">', "<ol>", "<li>",
    "</li>", "</ul>", "<b>", "</b>", "<i>", "<sup>", "</sup>", "<sub>", "</sub>", "<span>",
    "</span>", '<table data-bbox="1 1 900 900">', "<tr>", "<td>", "</td>", "</tr>", "</table>",
    '<address class="footer">', "</address>", '<div class="formula" data-bbox="0 0 10 10">',
    "$$", "\n", "\n\n", " ", '<img src="x.png" alt="A map">',
    "\\frac{a}{b}",
    # Chandra's layout blocks, math, form boxes and chemistry
    '<div data-bbox="10 10 500 40" data-label="Section-Header">', '<h2>', '</h2>',
    '<div data-bbox="5 5 900 60" data-label="Page-Header">', "<math>", "</math>",
    '<math display="block">', '<input type="checkbox" checked>', '<input type="radio">',
    "<chem>", "</chem>",
])


@given(st.booleans(), st.lists(st.one_of(HTML_FRAGMENTS, WORDS), max_size=60).map("".join),
       st.booleans())
def test_html_document_properties(fenced, body, closed):
    page = ("```html\n" if fenced else "") + "<html><body>" + body
    page += ("</body></html>" + ("\n```" if fenced else "")) if closed else ""
    elements = parse_page(page, 1, width=100, height=100, page_size_pt=(72.0, 72.0))
    check_page(page, elements, max_tokens=32)
    for element in elements:
        assert "\x00" not in element.text
        assert "data-bbox" not in element.text or element.kind in ("formula", "table")
        assert element.bbox is None or all(0 <= v <= 999 for v in element.bbox)
        assert not re.search(r"<(?:math|input|chem)\b", element.text) or element.kind == "table"


OLMOCR_PAGE = """---
primary_language: en
is_rotation_valid: True
rotation_correction: 0
is_table: False
is_diagram: False
---
# Annual Report

The company grew."""


def test_front_matter_opening_the_page_describes_it_and_is_dropped():
    elements = parse_page(OLMOCR_PAGE, 1)
    assert [(e.kind, e.text) for e in elements] == [
        ("heading", "Annual Report"), ("paragraph", "The company grew.")]
    assert OLMOCR_PAGE[slice(*elements[0].span)] == "# Annual Report"
    crlf = OLMOCR_PAGE.replace("\n", "\r\n")
    assert [e.text for e in parse_page(crlf, 1)] == ["Annual Report", "The company grew."]


@pytest.mark.parametrize("page", [
    "---\nName: John Smith\nDate: 3 May 2019\n---\nSigned.",        # a form between rules
    "Intro.\n\n---\nprimary_language: en\n---\nText.",              # not at the top
    "---\nprimary_language: en\n\nText.",                            # never closed
])
def test_text_that_only_looks_like_front_matter_stays_text(page):
    text = " ".join(e.text for e in parse_page(page, 1))
    assert "Name: John Smith" in text or "primary_language: en" in text


NANONETS_PAGE = """<watermark>CONFIDENTIAL</watermark>

# Lease Agreement

The tenant pays rent monthly, as set out on page <page_number>7</page_number>.

☑ Deposit received ☐ Keys returned

Signed: <signature>J. Smith</signature>

<page_number>3/12</page_number>"""


def test_nanonets_page_numbers_and_watermarks_are_furniture_and_tags_never_text():
    elements = parse_page(NANONETS_PAGE, 1)
    assert [(e.kind, e.text) for e in elements] == [
        ("page_furniture", "CONFIDENTIAL"),
        ("heading", "Lease Agreement"),
        ("paragraph", "The tenant pays rent monthly, as set out on page 7."),
        ("paragraph", "☑ Deposit received ☐ Keys returned"),
        ("paragraph", "Signed: J. Smith"),
        ("page_furniture", "3/12")]
    doc = ParsedDocument(source="n.pdf", pages=[PageResult(
        page_number=1, markdown=NANONETS_PAGE, elements=elements)])
    (chunk,) = chunk_document(doc)
    assert "CONFIDENTIAL" not in chunk.text and "3/12" not in chunk.text
    assert "J. Smith" in chunk.text and "<" not in chunk.text


def test_an_image_after_the_one_its_holder_boxes_is_another_figure():
    page = ('<html><body><div class="image" data-bbox="100 100 400 400">'
            '<img data-bbox="100 100 400 400"/><img src="y.png" alt="Logo"></div>')
    figures = parse_page(page, 1, width=100, height=100)
    assert [(e.kind, e.bbox, e.src, e.text) for e in figures] == [
        ("figure", (100, 100, 400, 400), None, ""), ("figure", None, "y.png", "Logo")]
    check_page(page, figures)


DOTS_CELLS = [
    {"bbox": [100, 50, 900, 100], "category": "Page-header", "text": "Annual Report 2019"},
    {"bbox": [100, 120, 900, 180], "category": "Title", "text": "Harbour Statistics"},
    {"bbox": [100, 200, 900, 240], "category": "Section-header", "text": "## 1. Overview"},
    {"bbox": [100, 250, 900, 400], "category": "Text",
     "text": 'The fleet "grew" to 5 m² of tanks.\n\nA second paragraph, café 😀.'},
    {"bbox": [100, 420, 500, 700], "category": "Picture"},
    {"bbox": [100, 710, 900, 740], "category": "Caption",
     "text": "Figure 1: Maps of the two harbours."},
    {"bbox": [100, 750, 900, 800], "category": "Formula", "text": "E = mc^2 \\quad x"},
    {"bbox": [100, 810, 900, 1000], "category": "Table",
     "text": '<table><tr><td colspan="2">Calls</td></tr><tr><td>North</td><td>12</td></tr>'
             '</table>'},
    {"bbox": [400, 1900, 600, 1950], "category": "Page-footer", "text": "3"},
]


@pytest.mark.parametrize("page", [
    json.dumps(DOTS_CELLS, ensure_ascii=False),
    "```json\n" + json.dumps(DOTS_CELLS, indent=2) + "\n```",     # \uXXXX escapes, fenced
])
def test_a_dots_ocr_layout_json_page_parses_into_the_same_elements(page):
    elements = parse_page(page, 1, width=1000, height=2000, page_size_pt=(500.0, 1000.0))
    assert [(e.kind, e.level, e.text) for e in elements] == [
        ("page_furniture", None, "Annual Report 2019"),
        ("heading", 1, "Harbour Statistics"),
        ("heading", 2, "1. Overview"),
        ("paragraph", None, 'The fleet "grew" to 5 m² of tanks.'),
        ("paragraph", None, "A second paragraph, café 😀."),
        ("figure", None, ""),
        ("caption", None, "Figure 1: Maps of the two harbours."),
        ("formula", None, "E = mc^2 \\quad x"),
        ("table", None, "Calls | Calls\nNorth Calls: 12."),
        ("page_furniture", None, "3")]
    title, figure, formula, table = elements[1], elements[5], elements[7], elements[8]
    # pixels of the image dots.ocr (Qwen2.5-VL) saw: 1000x2000 sent, seen as 1008x1988
    assert title.bbox == (99, 60, 893, 91)
    assert title.pdf_bbox == (49.5, 60.0, 446.5, 91.0) and figure.bbox == (99, 211, 496, 352)
    assert "Harbour Statistics" in page[title.span[0]:title.span[1]]
    assert formula.latex == "E = mc^2 \\quad x"
    assert table.table is not None and table.table.rows == [["Calls", "Calls"], ["North", "12"]]
    doc = ParsedDocument(source="d.pdf", pages=[PageResult(page_number=1, markdown=page,
                                                           elements=elements)])
    for text in [e.text for e in elements] + [c.text for c in chunk_document(doc, 64)]:
        assert "category" not in text and "bbox" not in text and "\x00" not in text


def test_a_layout_json_page_cut_off_keeps_what_was_written():
    page = json.dumps(DOTS_CELLS)
    cut = page[:page.index("second paragraph") + 6]
    elements = parse_page(cut, 1)
    assert [e.text for e in elements][-2:] == ['The fleet "grew" to 5 m² of tanks.', "A second"]
    assert all(e.bbox is None for e in elements)       # the image size is unknown
    assert elements[0].kind == "page_furniture" and elements[1].kind == "heading"


@pytest.mark.parametrize("page", [
    "[1] A reference list entry.",
    '```json\n{"name": "value"}\n```',
    '[{"name": "value"}]',
])
def test_text_that_only_looks_like_a_layout_json_page_stays_what_it_was(page):
    elements = parse_page(page, 1)
    assert "".join(e.text for e in elements).replace("```json\n", "").strip() in (
        page, '{"name": "value"}')


#: cell texts: other dialects' fragments, words, any characters (JSON escapes them)
LAYOUT_TEXT = st.lists(st.one_of(FRAGMENTS, WORDS, st.text(st.characters(
    blacklist_categories=("Cs",)), max_size=10)), max_size=8).map("".join)


@given(st.lists(st.tuples(st.sampled_from(["Text", "Title", "Table", "Picture", "Caption",
                                            "Formula", "Page-footer", "List-item"]),
                          LAYOUT_TEXT, st.lists(st.integers(-5, 3000), max_size=5)),
                max_size=8),
       st.booleans(), st.floats(0, 1))
def test_layout_json_page_properties(cells, ascii_only, cut):
    page = json.dumps([{"bbox": box, "category": category, "text": text}
                       for category, text, box in cells], ensure_ascii=ascii_only)
    elements = parse_page(page, 1, width=640, height=480)
    # the cells' texts are Markdown, read as one page of blocks
    assert not lost_words("\n\n".join(text for _, text, _ in cells), elements)
    assert not any('"category"' in e.text or "\x00" in e.text for e in elements)
    parse_page(page[:int(len(page) * cut)], 1, width=640, height=480)   # never raises


def test_an_html_document_reads_a_table_opened_in_an_open_table_as_the_block_parser_does():
    """Outside a cell, a ``<table>`` in an open table starts a new one (the open one was
    cut off): what follows the new one's end is the page again, not the first table."""
    page = ("<html><body><table><tr><td>a</td></tr><table><tr><td>b</td></tr></table>"
            "<h1>Title</h1><p>Text</p>")
    elements = parse_page(page, 1)
    assert [(e.kind, e.text) for e in elements] == [
        ("table", "a"), ("table", "b"), ("heading", "Title"), ("paragraph", "Text")]
    check_page(page, elements)


@pytest.mark.parametrize("page", ["0\x85---\nprimary: en\n---\n", "Intro\u2028# Head\n\ntext",
                                  "a\x0cb\n\n| x |\x85| y |\n|---|\n| 1 |"])
def test_lines_end_only_at_line_breaks_as_in_commonmark(page):
    """``str.splitlines`` also breaks at NEL, LINE SEPARATOR and form feeds; the block
    parser did, the rest of the parser did not, and a word was lost between them."""
    check_page(page, parse_page(page, 1))


MATHPIX_PAGE = r"""\title{Deep Residual Learning}

\author{Kaiming He}

\begin{abstract}
We present a residual learning framework.
\end{abstract}

\section*{1. Introduction}
Deep networks are hard to train. See \section{this} inline.

\subsection{Related work}
\begin{itemize}
\item Residual representations.
\item Shortcut connections.
\end{itemize}

```latex
\section{kept as code}
```"""


def test_latex_structure_in_markdown_reads_as_the_markdown_it_stands_for():
    elements = parse_page(MATHPIX_PAGE, 1)
    assert [(e.kind, e.level, e.text) for e in elements] == [
        ("heading", 1, "Deep Residual Learning"),
        ("paragraph", None, "Kaiming He"),
        ("paragraph", None, "We present a residual learning framework."),
        ("heading", 2, "1. Introduction"),
        ("paragraph", None, "Deep networks are hard to train. See \\section{this} inline."),
        ("heading", 3, "Related work"),
        ("list", None, "- Residual representations.\n- Shortcut connections."),
        ("code", None, "\\section{kept as code}")]
    assert MATHPIX_PAGE[slice(*elements[3].span)].startswith("\\section*{1. Introduction")


#: Chandra's layout HTML (its layout prompt, as docling parses it): top-level blocks with
#: a 0-1000 ``data-bbox`` and a ``data-label``, ``<math>``, form boxes, ``<chem>``
CHANDRA_PAGE = "\n".join([
    '<div data-bbox="50 20 950 40" data-label="Page-Header">'
    '<p>ACME Corp annual report</p></div>',
    '<div data-bbox="100 60 900 90" data-label="Section-Header">'
    '<h2>Results of operations</h2></div>',
    '<div data-bbox="100 100 900 160" data-label="Text">'
    '<p>Energy is <math>E=mc^2</math> here.</p></div>',
    '<div data-bbox="100 170 900 200" data-label="Equation-Block">'
    '<math display="block">\\int_0^1 x\\,dx</math></div>',
    '<div data-bbox="100 210 900 400" data-label="Image">'
    '<img alt="A bar chart of sales"/></div>',
    '<div data-bbox="100 410 900 430" data-label="Caption">'
    '<p>Figure 2. Sales by region</p></div>',
    '<div data-bbox="100 440 900 600" data-label="Table">'
    '<table><tr><th>Segment</th><th>2019</th></tr><tr><td>Wireless</td><td>1,320</td></tr></table></div>',
    '<div data-bbox="100 610 900 650" data-label="Form">'
    '<p><input type="checkbox" checked> I agree <input type="checkbox"> I do not</p></div>',
    '<div data-bbox="100 770 900 800" data-label="Text">'
    '<p>Water, <chem>O</chem>, is H<sub>2</sub>O.</p></div>',
    '<div data-bbox="400 950 600 970" data-label="Page-Footer">'
    '<p>Page 7 of 9</p></div>',
])


def test_a_chandra_layout_html_page_reads_its_labels_boxes_and_math():
    elements = parse_page(CHANDRA_PAGE, 1, width=1000, height=1000)
    assert [(e.kind, e.level, e.text) for e in elements] == [
        ("page_furniture", None, "ACME Corp annual report"),
        ("heading", 2, "Results of operations"),
        ("paragraph", None, "Energy is $E=mc^2$ here."),
        ("formula", None, "$$\\int_0^1 x\\,dx$$"),
        ("figure", None, "A bar chart of sales"),
        ("caption", None, "Figure 2. Sales by region"),
        ("table", None, "Segment | 2019\nWireless was 1,320 in 2019."),
        ("paragraph", None, "☑ I agree ☐ I do not"),
        ("paragraph", None, "Water, O, is H_2O."),
        ("page_furniture", None, "Page 7 of 9")]
    # every block has its layout box, the heading and the table the box of their holder
    assert [e.bbox for e in elements][:2] == [(50, 20, 950, 40), (100, 60, 900, 90)]
    assert elements[6].bbox == (100, 440, 900, 600) and elements[3].latex == "\\int_0^1 x\\,dx"
    assert all(e.bbox is not None for e in elements)


@pytest.mark.parametrize("page", [
    "0\n---\nprimary_language: en\n---\n",     # setext headings (found by an explore run)
    "# Title\n\nSome text\nmore\n\n```python\nx = 1\n```\n\n$$\nE = mc^2\n$$\n\n- a\n- b\n",
])
def test_a_page_with_carriage_return_line_endings_reads_as_with_line_feeds(page):
    """CommonMark's third line ending, ``\\r`` alone: the block parser splits lines there,
    and so does every reading of a block's text (a setext heading's text was lost)."""
    expected = [(e.kind, e.level, e.text) for e in parse_page(page, 1)]
    assert [(e.kind, e.level, e.text) for e in parse_page(page.replace("\n", "\r"), 1)] \
        == expected
