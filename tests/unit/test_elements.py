"""Page Markdown into elements: golden pages, the real fragments, and properties."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ovisocr_loader.document import mark_running_furniture
from ovisocr_loader.elements import parse_page, parse_table

LETTER = """# St. Mary's Hospital

Dr. A. Smith, Department of Nephrology

Dear colleague,

We saw your patient on 3 May. Results below.

<table border=1><tr><th>Test</th><th colspan=2>Result</th></tr>
<tr><td rowspan="2">Creatinine</td><td>1.9</td><td>mg/dL</td></tr>
<tr><td>168</td><td>&micro;mol/L</td></tr></table>

Table 1: Renal function on admission.

Kind regards,<br>
Dr. B. Jones

Page 1 of 2"""

LAB = """## Laboratory report

<table><thead><tr><td>Analyte</td><td>Value</td><td>Range</td></tr></thead>
<tbody><tr><td>Sodium</td><td>139</td><td>135-145</td></tr>
<tr><td>Potassium</td><td>5.9 &gt; H</td><td>3.5-5.1</td></tr></tbody></table>

The estimated GFR uses

$$
\\mathrm{eGFR} = 141 \\times \\min(S_{cr}/\\kappa, 1)^{\\alpha}
$$
(1)

where $S_{cr}$ is serum creatinine.

- 3 -"""

PAPER = """# 4 Results

<img src="images/bbox_100_120_480_400.jpg" />

Figure 1: Throughput against concurrency.

<img src='images/bbox_520_120_900_400.jpg'/>

Fig. 2. Latency distribution.

<img src="images/bbox_500_600_400_700.jpg" />

Both figures use the same runs \\[ x^2 \\] (2)"""

TRUNCATED = """Results continued

<table><tr><td>A</td><td>1</td></tr><tr><td>B</td><td>2"""

TOC = """# Contents

1. Introduction . . . . . . . . 1
2. Methods . . . . . . . . . . 4
3. Results . . . . . . . . . . 9"""


def kinds(elements):
    return [e.kind for e in elements]


def test_letter_with_rowspan_colspan_table():
    elements = parse_page(LETTER, 1)
    assert kinds(elements) == ["heading", "paragraph", "paragraph", "paragraph", "table",
                               "caption", "paragraph", "page_furniture"]
    table = elements[4].table
    assert table is not None
    assert table.rows == [["Test", "Result", "Result"], ["Creatinine", "1.9", "mg/dL"],
                          ["Creatinine", "168", "µmol/L"]]
    assert table.header_rows == 1 and not table.truncated
    assert "<table border=1>" in table.html
    assert table.to_markdown().splitlines()[0] == "| Test | Result | Result |"
    assert "Creatinine Result: 168. Creatinine Result: µmol/L." in table.to_text()
    assert elements[0].level == 1 and elements[0].text == "St. Mary's Hospital"
    for element in elements:
        start, end = element.span
        assert LETTER[start:end].strip()


def test_lab_report_with_thead_and_numbered_display_formula():
    elements = parse_page(LAB, 2)
    assert kinds(elements) == ["heading", "table", "paragraph", "formula", "paragraph",
                               "page_furniture"]
    table = elements[1].table
    assert table is not None and table.header_rows == 1
    assert table.rows[2] == ["Potassium", "5.9 > H", "3.5-5.1"]
    formula = elements[3]
    assert formula.latex.startswith("\\mathrm{eGFR} = 141")
    assert formula.equation_number == "1"
    assert "$S_{cr}$" in elements[4].text    # inline math stays in its paragraph
    assert all(e.page_number == 2 for e in elements)


def test_paper_page_with_two_figures_and_captions():
    elements = parse_page(PAPER, 3, width=1000, height=2000, page_size_pt=(500.0, 1000.0))
    assert kinds(elements) == ["heading", "figure", "caption", "figure", "caption", "figure",
                               "paragraph"]
    first = elements[1]
    assert first.bbox == (100, 120, 480, 400)
    assert first.pixel_bbox == (100, 240, 480, 800)
    assert first.pdf_bbox == (50.0, 120.0, 240.0, 400.0)
    assert elements[3].bbox == (520, 120, 900, 400)   # single quotes, no space before />
    assert "(2)" in elements[6].text                  # inline \\[..\\] stays in the paragraph


def test_inverted_box_keeps_the_figure_without_a_box(caplog: pytest.LogCaptureFixture):
    elements = parse_page(PAPER, 3, width=1000, height=2000)
    figures = [e for e in elements if e.kind == "figure"]
    assert len(figures) == 3
    assert figures[2].bbox is None and figures[2].pixel_bbox is None
    assert figures[2].src == "images/bbox_500_600_400_700.jpg"
    assert "inverted figure box" in caplog.text


def test_table_cut_off_by_truncation():
    elements = parse_page(TRUNCATED, 1)
    table = elements[1].table
    assert table is not None and table.truncated
    assert table.rows == [["A", "1"], ["B", "2"]]


def test_table_of_contents_page():
    elements = parse_page(TOC, 1)
    assert kinds(elements) == ["heading", "list"]
    assert "Methods" in elements[1].text


def test_think_marker_never_reaches_elements():
    elements = parse_page("Text\n\n<think>\n\n</think>\n\nMore", 1)
    assert [e.text for e in elements] == ["Text", "More"]


def test_display_math_variants():
    page = "$$ E = mc^{2} $$ (3)\n\n\\[\na + b\n\\]\n\n$$x$$"
    formulas = [e for e in parse_page(page, 1) if e.kind == "formula"]
    assert [(f.latex, f.equation_number) for f in formulas] == [
        ("E = mc^{2}", "3"), ("a + b", None), ("x", None)]


def test_running_headers_and_footers_are_flagged_not_dropped():
    pages = [parse_page(f"ACME Corp. Annual Report 2024\n\nBody text {n}.\n\nConfidential", n)
             for n in range(1, 5)]
    mark_running_furniture(pages)
    for elements in pages:
        assert kinds(elements) == ["page_furniture", "paragraph", "page_furniture"]
        assert elements[0].text == "ACME Corp. Annual Report 2024"


@pytest.mark.parametrize("html_table", [
    "<table><tr><td colspan=3>wide</td></tr><tr><td>a<td>b<td>c</table>",
    "<TABLE><TR><TD ROWSPAN='3'>x</TD><TD>1</TD></TR><TR><TD>2</TD></TR><TR><TD>3</TD>",
])
def test_lenient_table_html(html_table):
    table = parse_table(html_table)
    assert all(len(row) == len(table.rows[0]) for row in table.rows)
    assert len(table.rows) == (2 if "wide" in html_table else 3)


@pytest.mark.parametrize(("html_table", "rows"), [
    # HTML lets </td> and </tr> out: a new row ends the open cell and row
    ("<table><tr><td>a<td>x<tr><td>b<td>y</table>", [["a", "x"], ["b", "y"]]),
    ("<table><tr><th>Item<th>2019<tr><td>Sales<td>12<tr><td>Cost<td>7",
     [["Item", "2019"], ["Sales", "12"], ["Cost", "7"]]),
    # text after a row or cell that ended the open cell is outside it: a stray row
    ("<table><tr><td>a<tr></tr>note", [["a"], ["note"]]),
    ("<table><tr><td>a<td>b</td>note</table>", [["a", "b"], ["note", ""]]),
    # styling around cells closes nothing; a block's bounds in a cell break its line
    ("<table><tr><span><td></span>x<td>y</table>", [["x", "y"]]),
    ("<table><tr><td><p>a</p><p>b</p><td><b>c</b>d</table>", [["a\nb", "cd"]]),
    ("<table><tr><td>m<sup>2<sup>3</sup></sup></table>", [["m^2^3"]]),
])
def test_rows_and_cells_left_open_end_where_the_next_begins(html_table, rows):
    assert parse_table(html_table).rows == rows


def test_text_without_a_tag_is_no_table_and_no_warning():
    # bs4 warns that such text looks like a file name; the suite turns warnings into errors
    assert parse_table("report.TXT").rows == []


SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "reference" / "ovisocr2_samples"


def test_real_fragments_from_the_reference():
    if not SAMPLES.is_dir():
        pytest.skip("reference samples not present")
    sample = (SAMPLES / "sample_01.md").read_text()
    elements = parse_page(sample, 1)
    assert [e.kind for e in elements][:2] == ["paragraph", "paragraph"]
    formula = next(e for e in elements if e.kind == "formula")
    assert formula.latex == "\\mathrm{E}=\\mathrm{m}\\ \\mathrm{c}^{2}"
    table = next(e for e in elements if e.kind == "table")
    assert table.table is not None and table.table.truncated
    assert table.table.rows[0] == ["Model", "Params", "OmniDocBench"]
    assert table.table.header_rows == 1
    blank = parse_page((SAMPLES / "sample_02.md").read_text(), 1)
    assert kinds(blank) == ["paragraph"]


FRAGMENTS = st.sampled_from([
    "# ", "## ", "- ", "1. ", "$$", "\\[", "\\]", "<table>", "<tr>", "<td>", "</td>",
    "</tr>", "</table>", "<th colspan=2>", "<br>", '<img src="images/bbox_1_2_30_40.jpg" />',
    "```", "(1)", "Figure 1", "Table 2", "Page 3", "\n", "\n\n", " ", "&amp;", "<think>",
])
WORDS = st.from_regex(r"[A-Za-z][a-z0-9]{0,7}", fullmatch=True)


@given(st.lists(st.one_of(FRAGMENTS, WORDS), max_size=60).map("".join))
def test_no_text_outside_markup_is_lost(text):
    elements = parse_page(text, 1, width=100, height=100)
    covered = " ".join(f"{e.text} {e.latex or ''}" for e in elements)
    covered += " " + " ".join(c for e in elements if e.table for r in e.table.rows for c in r)
    visible = html.unescape(re.sub(r"<[^<>]*>", " ", text))
    visible = visible.replace("think", "")  # the marker word itself is dropped on purpose
    for word in re.findall(r"[A-Za-z0-9]+", visible):
        assert word in covered or word == "think"
    for element in elements:
        assert 0 <= element.span[0] <= element.span[1] <= len(text)


@given(st.text(max_size=400))
def test_arbitrary_text_never_crashes(text):
    parse_page(text, 1, width=10, height=10, page_size_pt=(10.0, 10.0))
    parse_table(text)


def test_code_fences_keep_their_text():
    assert [e.text for e in parse_page("```python\nprint(1)\n```", 1)] == ["print(1)"]
    assert [e.text for e in parse_page("```A", 1)] == ["A"]
    # text after a closing fence is the page's, not part of the fence
    assert [e.text for e in parse_page("```\n```(1)", 1)] == ["(1)"]
    assert [e.text for e in parse_page("```python\nx = 1\n``` note", 1)] == ["x = 1\nnote"]
    # an empty fence's info word is text, with or without text after the closing fence
    assert [e.text for e in parse_page("```A\n```# B", 1)] == ["A\n# B"]


@pytest.mark.parametrize(("page", "text"), [
    ("AT&amp;T &lt;b&gt; &#169; 2019 &#x2013; R&D &copy 3 &bogus;",
     "AT&T <b> © 2019 – R&D &copy 3 &bogus;"),
    ("# Q&amp;A", "Q&A"),
    ("<html><body><p>Smith &amp; Sons &ndash; 2019</p>", "Smith & Sons – 2019"),
])
def test_character_references_in_prose_read_as_their_characters(page, text):
    """As CommonMark reads them (models writing HTML escape ``&``); a reference needs
    its semicolon, so text that only looks like one stays as written."""
    (element,) = parse_page(page, 1)
    assert element.text == text
