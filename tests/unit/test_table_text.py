"""Tables as retrieval text: header rows a VLM writes as plain cells, composed and
spanned headers, units, empty header columns, and the context split parts carry."""

from __future__ import annotations

import pytest

from ovisocr_loader import PageResult, ParsedDocument, chunk_document
from ovisocr_loader.chunking.chunker import TABLE_MARK, table_context
from ovisocr_loader.elements import parse_page, parse_table
from ovisocr_loader.elements.token_estimate import approx_tokens


def row(*cells: str, spans: dict[int, int] | None = None) -> str:
    spans = spans or {}
    return "<tr>" + "".join(
        f'<td colspan="{spans[i]}">{c}</td>' if i in spans else f"<td>{c}</td>"
        for i, c in enumerate(cells)) + "</tr>"


# years under a spanned label, an extra column group without the label, no <thead>/<th>
EXPENSES = ("<table>"
            + row("", "Years Ended", "", spans={1: 3})
            + row("", "July 27, 2019", "July 28, 2018", "July 29, 2017", "Variance in Dollars")
            + row("Research and development", "$ 6,577", "$ 6,332", "$6,059", "$245")
            + row("Percentage of revenue", "12.7%", "12.8%", "12.6%", "")
            + "</table>")
# a units note in the stub, periods in one cell each, a section row
CAPEX = ("<table>"
         + row("(In millions of dollars, except capital intensity)", "Years ended December 31",
               spans={1: 3})
         + row("", "2019", "2018", "%Chg")
         + row("Capital expenditures", "", "", "")
         + row("Wireless", "1,320", "1,086", "22")
         + "</table>")


def test_years_under_a_spanned_label_are_header_rows():
    table = parse_table(EXPENSES)
    assert table.header_rows == 2
    lines = table.to_text().splitlines()
    # the spanned label once, in the header line; each value tied to its own year
    assert lines[0] == ("Years Ended July 27, 2019 | July 28, 2018 | July 29, 2017 | "
                        "Variance in Dollars")
    assert lines[1] == ("Research and development was $ 6,577 in July 27, 2019. "
                        "Research and development was $ 6,332 in July 28, 2018. "
                        "Research and development was $6,059 in July 29, 2017. "
                        "Research and development Variance in Dollars: $245.")
    assert sum(line.count("Years Ended") for line in lines) == 1
    assert lines[2] == ("Percentage of revenue was 12.7% in July 27, 2019. Percentage of "
                        "revenue was 12.8% in July 28, 2018. Percentage of revenue was 12.6% "
                        "in July 29, 2017.")


def test_units_are_said_once_and_section_rows_stand_alone():
    table = parse_table(CAPEX)
    assert table.header_rows == 2
    lines = table.to_text().splitlines()
    assert lines[0] == "(In millions of dollars, except capital intensity)"
    assert lines[1] == "Years ended December 31 2019 | 2018 | %Chg"
    assert lines[2] == "Capital expenditures"
    assert lines[3] == ("Wireless was 1,320 in 2019. Wireless was 1,086 in 2018. "
                        "Wireless %Chg: 22.")
    assert not any(line.startswith("(In millions") for line in lines[1:])


def test_shared_words_leave_the_value_labels():
    table = parse_table("<table>" + row("", "Year ended December 31, 2019",
                                        "Year ended December 31, 2018")
                        + row("Revenue", "$2,259", "$4,248") + "</table>")
    assert table.to_text().splitlines() == [
        "Year ended December 31, 2019 | Year ended December 31, 2018",
        "Revenue was $2,259 in 2019. Revenue was $4,248 in 2018."]


def test_two_levels_label_a_value_when_the_lower_one_repeats():
    table = parse_table("<table>"
                        + row("", "2019", "2018", spans={1: 2, 2: 2})
                        + row("", "Amount", "%", "Amount", "%")
                        + row("VAS", "26,120", "50%", "20,330", "47%") + "</table>")
    assert table.header_rows == 2
    assert table.to_text().splitlines()[-1] == (
        "VAS was 26,120 in 2019 Amount. VAS was 50% in 2019 %. VAS was 20,330 in 2018 Amount. "
        "VAS was 47% in 2018 %.")


def test_header_cells_over_empty_columns_still_reach_the_text():
    table = parse_table("<table><tr><th>Which poem</th><th>A</th><th>B</th><th>C</th></tr>"
                        "<tr><td>Ode</td><td></td><td></td><td></td></tr>"
                        "<tr><td>Elegy</td><td></td><td></td><td></td></tr></table>")
    assert table.to_text().splitlines() == ["Which poem | A | B | C", "Ode", "Elegy"]


def test_a_label_row_over_numbers_after_a_title_row_is_a_header():
    table = parse_table("<table>" + row("", "FY19 payouts", spans={1: 2})
                        + row("NEO", "Base Salary", "Payout")
                        + row("G. Clark", "1,000,000", "0") + "</table>")
    assert table.header_rows == 2
    assert table.to_text().splitlines()[-1] == (
        "G. Clark Base Salary: 1,000,000. G. Clark Payout: 0.")


def test_a_title_row_of_one_cell_over_a_header_is_a_header_row():
    table = parse_table("<table>" + row("(In millions)", "", "", "")
                        + row("Year Ended June 30,", "2019", "2018", "2017")
                        + row("Write-offs", "(116)", "(98)", "(106)") + "</table>")
    assert table.header_rows == 2
    assert table.to_text().splitlines() == [
        "(In millions)", "Year Ended June 30, | 2019 | 2018 | 2017",
        "Write-offs was (116) in 2019. Write-offs was (98) in 2018. Write-offs was (106) in "
        "2017."]
    # a section label over values is not a title: nothing to head
    body = parse_table("<table>" + row("Revenue", "", "") + row("Product", "100", "200")
                       + "</table>")
    assert body.header_rows == 0


@pytest.mark.parametrize("year", ["2018(1)", "2018 1", "20181"])
def test_a_year_with_a_footnote_mark_still_heads_its_column(year: str):
    table = parse_table("<table>" + row("", "2019", year) + row("Net income", "$672", "$970")
                        + "</table>")
    assert table.header_rows == 1


@pytest.mark.parametrize(("column", "fact"), [
    ("2019", "Wireless was 5 in 2019."), ("FY19", "Wireless was 5 in FY19."),
    ("Q3", "Wireless was 5 in Q3."), ("Dec. 31", "Wireless was 5 in Dec. 31."),
    ("1-3 years", "Wireless was 5 in 1-3 years."), ("53 WEEKS", "Wireless was 5 in 53 WEEKS."),
    ("Top-1", "Wireless Top-1: 5."), ("Level 2", "Wireless Level 2: 5."),
    ("Tonnage", "Wireless Tonnage: 5."),
])
def test_a_value_reads_in_its_period_only_when_the_column_names_one(column: str, fact: str):
    table = parse_table(f"<table><tr><th>Segment</th><th>{column}</th><th>Other</th></tr>"
                        "<tr><td>Wireless</td><td>5</td><td></td></tr></table>")
    assert table.to_text().splitlines()[-1] == fact


def test_a_long_row_label_is_written_once():
    table = parse_table("<table>" + row("", "2019", "2018")
                        + row("Net cash provided by operating activities", "$13,189", "$17,400")
                        + "</table>")
    assert table.to_text().splitlines()[-1] == (
        "Net cash provided by operating activities was $13,189 in 2019 and $17,400 in 2018.")


def test_a_note_mark_set_close_after_a_row_label_stands_apart():
    table = parse_table("<table>" + row("", "2019", "2018") + row("Accruals1", "49.3", "43.2")
                        + row("Level 2", "7", "8") + "</table>")
    assert table.to_text().splitlines()[-2:] == [
        "Accruals (1) was 49.3 in 2019. Accruals (1) was 43.2 in 2018.",
        "Level 2 was 7 in 2019. Level 2 was 8 in 2018."]


def test_a_row_number_is_not_repeated_with_every_value():
    table = parse_table("<table>" + row("#", "Topic", "Score")
                        + row("1", "Proteomics", "0.87") + "</table>")
    assert table.to_text().splitlines()[-1] == "1: Proteomics (Topic) and 0.87 (Score)."


def test_cjk_labels_are_measured_in_words_of_two_characters():
    short = parse_table("<table>" + row("渠道", "销额同比", "均价同比")
                        + row("线上", "-21.4%", "0.8%") + "</table>")
    assert short.to_text().splitlines()[-1] == "线上 销额同比: -21.4%. 线上 均价同比: 0.8%."
    long = parse_table("<table>" + row("渠道", "销额市占率同比变化", "均价同比")
                       + row("线上", "-21.4%", "0.8%") + "</table>")
    assert long.to_text().splitlines()[-1] == "线上 | -21.4% | 0.8%"


def test_long_column_labels_leave_the_rows_in_column_order():
    table = parse_table("<table>" + row("", "Unrealized Holding Gains on Securities",
                                        "Minimum Pension Liability", "Total")
                        + row("Balance at March 31, 2018", "$1.9", "$(10.1)", "$(17.6)")
                        + "</table>")
    assert table.to_text().splitlines() == [
        "Unrealized Holding Gains on Securities | Minimum Pension Liability | Total",
        "Balance at March 31, 2018 | $1.9 | $(10.1) | $(17.6)"]


def test_a_date_label_keeps_its_month():
    table = parse_table("<table>" + row("", "December 27, 2019", "December 28, 2018")
                        + row("Stock options", "—", "201,799") + "</table>")
    assert table.to_text().splitlines()[-1] == (
        "Stock options was — in December 27, 2019. Stock options was 201,799 in December 28, "
        "2018.")


EXPENSES_TEXT = parse_table(EXPENSES).to_text()

PIPE_SPANNED = """| | Years Ended | | | |
|---|---|---|---|---|
| | July 27, 2019 | July 28, 2018 | July 29, 2017 | Variance in Dollars |
| Research and development | $ 6,577 | $ 6,332 | $6,059 | $245 |
| Percentage of revenue | 12.7% | 12.8% | 12.6% | |"""


@pytest.mark.parametrize("page", [
    PIPE_SPANNED,
    # docling's Markdown repeats a spanned label over every cell it spans
    PIPE_SPANNED.replace("| | Years Ended | | | |",
                         "| | Years Ended | Years Ended | Years Ended | |"),
    # a <thead> holding only the spanned label's row
    EXPENSES.replace("<table>", "<table><thead>").replace("</tr>", "</tr></thead>", 1),
    # a LaTeX table ruled under its first row only
    "\\begin{tabular}{lrrrr}\n & \\multicolumn{3}{c}{Years Ended} & \\\\ \\hline\n"
    " & July 27, 2019 & July 28, 2018 & July 29, 2017 & Variance in Dollars \\\\\n"
    "Research and development & \\$ 6,577 & \\$ 6,332 & \\$6,059 & \\$245 \\\\\n"
    "Percentage of revenue & 12.7\\% & 12.8\\% & 12.6\\% & \\\\\n\\end{tabular}",
    # an OTSL table (DocTags) whose column-header cells are the spanned label's only
    "<otsl><ecel><ched>Years Ended<lcel><lcel><ecel><nl><ecel><fcel>July 27, 2019"
    "<fcel>July 28, 2018<fcel>July 29, 2017<fcel>Variance in Dollars<nl>"
    "<fcel>Research and development<fcel>$ 6,577<fcel>$ 6,332<fcel>$6,059<fcel>$245<nl>"
    "<fcel>Percentage of revenue<fcel>12.7%<fcel>12.8%<fcel>12.6%<ecel><nl></otsl>",
])
def test_years_under_a_stated_header_that_spans_them_are_header_rows(page: str):
    """A pipe table cannot span a label over its years, so the years stand under the
    delimiter (and a model may mark or rule only the first row): they still head their
    columns, as in an HTML table that spans the label."""
    (element,) = parse_page(page, 1)
    assert element.table is not None and element.table.header_rows == 2
    assert element.text == EXPENSES_TEXT


@pytest.mark.parametrize("page", [
    # every column of numbers named apart already: the row under the delimiter is data
    "| Segment | 2019 | 2018 |\n|---|---|---|\n| | Wireless | Wireline |\n| Sales | 5 | 6 |",
    # a stub cell spanning two columns of row labels is no unnamed value column
    "<table><tr><th colspan=2>Plant</th><th>Control</th><th>Treated</th></tr>"
    "<tr><td>Height</td><td>Group 1</td><td>105</td><td>120</td></tr>"
    "<tr><td>Height</td><td>Group 2</td><td>62</td><td>112</td></tr></table>",
])
def test_a_stated_header_naming_its_columns_is_not_extended(page: str):
    (element,) = parse_page(page, 1)
    assert element.table is not None and element.table.header_rows == 1


@pytest.mark.parametrize("body", [
    row("Revenue", "n/a", "n/a"),          # placeholders are values, not labels
    row("Revenue", "$(15,571)", "$(24,122)"),
])
def test_rows_of_values_are_never_header_rows(body: str):
    table = parse_table("<table>" + row("", "2019", "2018") + body
                        + row("Cost", "5", "6") + "</table>")
    assert table.header_rows == 1


def _doc(markdown: str) -> ParsedDocument:
    page = PageResult(page_number=1, markdown=markdown, elements=parse_page(markdown, 1))
    return ParsedDocument(source="t.pdf", total_pages=1, pages=[page])


def test_every_part_of_a_split_table_carries_its_context_and_header():
    intro = "Long prose about the harbour. " * 20 + "Tonnage by vessel is as follows (in tonnes):"
    rows = "".join(row(f"Vessel {i}", f"{1000 + i}", f"{900 + i}") for i in range(60))
    table = "<table>" + row("", "2019", "2018") + rows + "</table>"
    chunks = chunk_document(_doc(f"{intro}\n\n{table}\n\nAfter the table."), max_tokens=120)
    parts = [c for c in chunks if any(e.kind == "table" for e in c.elements)]
    assert len(parts) > 2
    for chunk in parts:
        lines = chunk.text.splitlines()
        context = lines.index("Tonnage by vessel is as follows (in tonnes):")
        assert [line for line in lines[context + 1:] if line][:2] == ["Table", "2019 | 2018"]
        assert approx_tokens(chunk.text) <= 120
    values = [line for c in parts for line in c.text.splitlines() if line.startswith("Vessel")]
    assert values == [f"Vessel {i} | {1000 + i} | {900 + i}" for i in range(60)]


def test_a_table_filling_half_its_chunk_closes_it():
    rows = "".join(row(f"Vessel {i}", f"{1000 + i}") for i in range(12))
    big = "<table>" + row("Vessel", "Tonnage") + rows + "</table>"
    small = "<table>" + row("Vessel", "Tonnage") + row("Aurora", "1200") + "</table>"
    for table, closes in ((big, True), (small, False)):
        chunks = chunk_document(_doc(f"{table}\n\nAfter the table."), max_tokens=120)
        assert (chunks[-1].text == "After the table.") is closes
        assert chunks[-1].text.endswith("After the table.")


def test_a_large_table_after_a_quarter_of_prose_opens_a_chunk():
    prose = "The fleet grew in the year under review. " * 6
    rows = "".join(row(f"Vessel {i}", f"{1000 + i}") for i in range(12))
    table = "<table>" + row("Vessel", "Tonnage") + rows + "</table>"
    page = f"{prose}\n\nTonnage by vessel:\n\n{table}"
    first, second = chunk_document(_doc(page), max_tokens=200)
    assert first.text.endswith("Tonnage by vessel:")
    assert second.text.startswith(
        "Tonnage by vessel:\nTable\nVessel | Tonnage\nVessel 0 Tonnage: 1000.")
    # after a short introduction the table stays in the same chunk
    (only,) = chunk_document(_doc(page.replace(prose, "The fleet grew.")), max_tokens=200)
    assert only.text.startswith("The fleet grew.\n\nTonnage by vessel:\n\nTable\nVessel | Tonnage")


def test_a_table_beside_its_introduction_does_not_repeat_it():
    page = "Fleet by tonnage:\n\n" + "<table>" + row("Vessel", "Tonnage") + row(
        "Aurora", "1200") + "</table>"
    (chunk,) = chunk_document(_doc(page), max_tokens=200)
    assert chunk.text == "Fleet by tonnage:\n\nTable\nVessel | Tonnage\nAurora Tonnage: 1200."


def test_every_table_part_and_nothing_else_opens_with_the_table_line():
    rows = "".join(row(f"Vessel {i}", f"{1000 + i}") for i in range(40))
    page = ("The fleet grew.\n\n<table>" + row("Vessel", "Tonnage") + rows
            + "</table>\n\nAfter the table.")
    chunks = chunk_document(_doc(page), max_tokens=100)
    parts = [part for c in chunks for part in c.text.split("\n\n") if "Vessel" in part]
    assert len(parts) > 1
    # the mark opens each part, after the introducing sentence where that is repeated
    assert [p.split(TABLE_MARK + "Vessel | Tonnage\n")[0] for p in parts] == [
        "", *["The fleet grew.\n"] * (len(parts) - 1)]
    assert sum(c.text.count(TABLE_MARK) for c in chunks) == len(parts)
    assert all(approx_tokens(c.text) <= 100 for c in chunks)


def test_a_caption_under_a_table_joins_its_chunk():
    rows = "".join(row(f"Vessel {i}", f"{1000 + i}") for i in range(12))
    page = ("<table>" + row("Vessel", "Tonnage") + rows + "</table>\n\n"
            "Table 2: Fleet.\n\nNext paragraph.")
    chunks = chunk_document(_doc(page), max_tokens=120)
    assert [c.text.splitlines()[-1] for c in chunks] == ["Table 2: Fleet.", "Next paragraph."]


def test_table_context_is_the_introducing_sentence():
    (paragraph,) = parse_page("A long opening. " * 40 + "Figures are in U.S. dollars as "
                              "follows:", 1)
    assert table_context(paragraph) == "Figures are in U.S. dollars as follows:"
    (heading,) = parse_page("## Fleet", 1)
    assert table_context(heading) == "Fleet"
    assert table_context(None) == ""


def test_a_table_at_the_top_of_a_page_takes_no_context_from_the_page_before():
    first = PageResult(page_number=1, markdown="Closing words.",
                       elements=parse_page("Closing words.", 1))
    table = "<table><tr><th>Item</th><th>State</th></tr>" + row("Bollards", "worn") + "</table>"
    second = PageResult(page_number=2, markdown=table, elements=parse_page(table, 2))
    doc = ParsedDocument(source="t.pdf", total_pages=2, pages=[first, second])
    chunks = chunk_document(doc, max_tokens=200, page_breaks=True)
    assert chunks[-1].text == "Table\nItem | State\nBollards State: worn."
