"""LaTeX tables (Nougat, GOT-OCR, Mathpix) read as the same tables as HTML."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ovisocr_loader import PageResult, ParsedDocument, chunk_document
from ovisocr_loader.elements import parse_page
from ovisocr_loader.elements.latex_tables import parse_latex_table

NOUGAT_PAGE = r"""# Results

Table 2 lists the accuracy.
\begin{table}[h]
\centering
\caption{Results on \textbf{ImageNet}}
\begin{tabular}{|l|c|c|}
\hline
\multirow{2}{*}{Model} & \multicolumn{2}{c|}{Accuracy (\%)} \\
\cline{2-3}
 & Top-1 & Top-5 \\
\hline
{\bf ResNet} & 76.1 & 92.9 \\
ViT \& co & $80.1 \pm 0.2$ & 95.0 \\
\hline
\end{tabular}
\label{tab:acc}
\end{table} More text after.

\begin{tabular}{ll} a & b \\ c & d \\ e & """


def test_a_latex_table_page_gives_a_caption_and_a_table_with_spans_and_header():
    elements = parse_page(NOUGAT_PAGE, 1)
    assert [e.kind for e in elements] == [
        "heading", "paragraph", "caption", "table", "paragraph", "table"]
    caption, table, after, cut = elements[2:]
    assert caption.text == "Results on ImageNet"
    assert table.table is not None and table.table.header_rows == 2
    assert table.table.rows == [
        ["Model", "Accuracy (%)", "Accuracy (%)"],
        ["Model", "Top-1", "Top-5"],
        ["ResNet", "76.1", "92.9"],
        ["ViT & co", "$80.1 \\pm 0.2$", "95.0"]]
    assert table.text.splitlines()[-2:] == [
        "ResNet Top-1: 76.1. ResNet Top-5: 92.9.",      # a digit, but no period
        "ViT & co Top-1: $80.1 \\pm 0.2$. ViT & co Top-5: 95.0."]
    assert NOUGAT_PAGE[slice(*table.span)].startswith("\\begin{table}")
    assert NOUGAT_PAGE[slice(*table.span)].endswith("\\end{table}")
    assert table.table.html.startswith("<table><thead>") and not table.table.truncated
    assert after.text == "More text after."
    assert cut.table is not None and cut.table.truncated
    assert cut.table.rows == [["a", "b"], ["c", "d"], ["e", ""]]
    doc = ParsedDocument(source="n.pdf", pages=[PageResult(page_number=1, markdown=NOUGAT_PAGE,
                                                           elements=elements)])
    for chunk in chunk_document(doc):
        assert "\\begin" not in chunk.text and "\\hline" not in chunk.text


@pytest.mark.parametrize(("source", "rows", "header_rows"), [
    # booktabs: the header ends at \midrule; row spacing after \\
    ("\\begin{tabular}{lrr}\\toprule Year & Revenue & Cost \\\\[2pt] \\midrule "
     "2019 & 1,200 & 800 \\\\ 2018 & 1,000 & 700 \\\\ \\bottomrule\\end{tabular}",
     [["Year", "Revenue", "Cost"], ["2019", "1,200", "800"], ["2018", "1,000", "700"]], 1),
    # a line break inside braces stays in its cell; an escaped & is text
    ("\\begin{tabular}{ll}\\makecell{Net \\\\ income} & R\\&D \\\\ 12 & 3 \\end{tabular}",
     [["Net \\\\ income", "R&D"], ["12", "3"]], 1),
    # tabularx: a width before the column spec; a first cell in braces is a cell
    ("\\begin{tabularx}{\\textwidth}{XX}{\\bf Name} & Value \\\\ \\hline a & 1 \\end{tabularx}",
     [["Name", "Value"], ["a", "1"]], 1),
    # \multirow with an option and the * width form; the covered cell written empty
    ("\\begin{tabular}{lll}\\multirow[t]{2}*{Group} & x & 1 \\\\ & y & 2 \\\\ Other & z & 3"
     "\\end{tabular}",
     [["Group", "x", "1"], ["Group", "y", "2"], ["Other", "z", "3"]], 0),
])
def test_latex_table_forms(source, rows, header_rows):
    table = parse_latex_table(source).table
    assert table.rows == rows and table.header_rows == header_rows


def test_a_latex_table_in_a_code_block_stays_code():
    page = "```latex\n\\begin{tabular}{ll} a & b \\end{tabular}\n```"
    assert [e.kind for e in parse_page(page, 1)] == ["code"]


WORD = st.from_regex(r"[A-Za-z][a-z0-9]{1,6}", fullmatch=True)
CELL = st.one_of(WORD, st.builds(lambda n, w: f"\\multicolumn{{{n}}}{{c}}{{{w}}}",
                                 st.integers(1, 3), WORD),
                 st.builds(lambda n, w: f"\\multirow{{{n}}}{{*}}{{\\textbf{{{w}}}}}",
                           st.integers(1, 3), WORD), st.just(""))
ROW = st.lists(CELL, min_size=1, max_size=4).map(" & ".join)
RULE = st.sampled_from(["", "\\hline ", "\\midrule ", "\\cline{1-2} "])


@given(st.lists(st.tuples(RULE, ROW), min_size=1, max_size=6), st.booleans(), st.floats(0, 1))
def test_latex_table_properties(rows, closed, cut):
    source = "\\begin{tabular}{lll}\n" + "".join(
        f"{rule}{row} \\\\\n" for rule, row in rows) + ("\\end{tabular}" if closed else "")
    table = parse_latex_table(source).table
    assert len({len(r) for r in table.rows}) <= 1
    cells = " ".join(c for r in table.rows for c in r)
    written = {w for _, row in rows for w in re.findall(r"\w{2,}", re.sub(r"\\[a-z]+", " ", row))}
    assert all(w in cells for w in written)
    assert table.truncated is not closed and 0 <= table.header_rows <= len(table.rows)
    parse_page(source[:int(len(source) * cut)], 1)   # cut anywhere: never raises


@pytest.mark.parametrize(("source", "caption"), [
    ("\\begin{table}\\caption{Results of the", "Results of the"),     # cut off inside it
    ("\\begin{table}\\caption[Short]{Results \\emph{all}}\\end{table}", "Results all"),
    ("\\begin{table}\\begin{tabular}{l}a\\end{tabular}\\end{table}", None),
])
def test_a_float_caption_is_read_whole(source, caption):
    found = parse_latex_table(source).caption
    assert (found and found.text) == caption
