"""The document layer: a file's pages read as one report over its page breaks."""

from __future__ import annotations

import pytest

from ovisocr_loader import PageResult, ParsedDocument, chunk_document
from ovisocr_loader.document import mark_running_furniture, read_report
from ovisocr_loader.elements import parse_page

HEADER = "<tr><td></td><td>2019</td><td>2018</td></tr>"
HEAD_ROWS = "<tr><td></td><td colspan=\"2\">Year ended December 31,</td></tr>" + HEADER


def rows(*labels: str) -> str:
    return "".join(f"<tr><td>{label}</td><td>{n},1{n}0</td><td>{n},0{n}5</td></tr>"
                   for n, label in enumerate(labels, 1))


def html(body: str) -> str:
    return f"<table>{body}</table>"


def pages(*markdown: str) -> list[list]:
    parsed = [parse_page(text, number) for number, text in enumerate(markdown, 1)]
    mark_running_furniture(parsed)
    return parsed


def blocks_of(*markdown: str):
    return read_report(pages(*markdown))


def test_a_table_continued_without_its_header_is_one_table_with_both_pages():
    (intro, table) = blocks_of(
        "Cash flows were as follows:\n\n" + html(HEAD_ROWS + rows("Revenue", "Costs")),
        html(rows("Free cash flow", "Dividends")))
    assert intro.element.kind == "paragraph"
    assert table.pages == [1, 2] and [p.page_number for p in table.parts] == [1, 2]
    assert table.element.table.header_rows == 2
    assert [r[0] for r in table.element.table.rows[2:]] == [
        "Revenue", "Costs", "Free cash flow", "Dividends"]
    assert "Free cash flow was 1,110 in 2019." in table.element.text


@pytest.mark.parametrize("repeat", [HEAD_ROWS, HEADER], ids=["whole header", "lower row"])
def test_a_repeated_header_is_left_out_of_the_joined_rows(repeat: str):
    (table,) = blocks_of(html(HEAD_ROWS + rows("Revenue")), html(repeat + rows("Costs")))
    assert [r[0] for r in table.element.table.rows] == ["", "", "Revenue", "Costs"]


def test_pipe_tables_join_as_html_tables_do():
    first = "| | 2019 | 2018 |\n|---|---|---|\n| Revenue | 1,200 | 1,100 |"
    second = "| Costs | 800 | 700 |\n|---|---|---|\n| Profit | 400 | 400 |"
    (table,) = blocks_of(first, second)
    assert [r[0] for r in table.element.table.rows] == ["", "Revenue", "Costs", "Profit"]


@pytest.mark.parametrize("second", [
    html("<tr><td></td><td>2017</td><td>2016</td></tr>" + rows("Costs")),   # its own header
    "<table><tr><td>Costs</td><td>1</td><td>2</td><td>3</td></tr></table>",  # other width
    html("<tr><td>1</td><td>Costs</td><td>Rent</td></tr>"),                 # other kinds
    "## Liquidity\n\n" + html(rows("Costs")),                                # a heading first
    "Table 2: Costs\n\n" + html(rows("Costs")),                              # a new title
], ids=["header", "width", "kinds", "heading", "title"])
def test_a_different_table_stays_apart(second: str):
    blocks = blocks_of(html(HEAD_ROWS + rows("Revenue")), second)
    assert all(len(b.parts) == 1 for b in blocks)


def test_only_furniture_may_stand_between_the_parts():
    header = "Acme Corp annual report 2019"
    texts = [f"{header}\n\nIntro {n} of the year.\n\n{html(HEAD_ROWS + rows('Revenue'))}\n\n{n}"
             for n in range(1, 4)]
    texts[1] = f"{header}\n\n{html(rows('Costs'))}\n\n2"
    blocks = [b for b in blocks_of(*texts) if b.element.kind != "page_furniture"]
    joined = [b for b in blocks if len(b.parts) > 1]
    assert len(joined) == 1 and joined[0].pages == [1, 2]


def test_pages_that_do_not_follow_each_other_do_not_join():
    first = parse_page(html(HEAD_ROWS + rows("Revenue")), 1)
    third = parse_page(html(rows("Costs")), 3)
    assert all(len(b.parts) == 1 for b in read_report([first, third]))


@pytest.mark.parametrize(("first", "second", "joined"), [
    ("The group expects revenue to grow in the coming year because its new",
     "terminal opens in May.", "The group expects revenue to grow in the coming year "
     "because its new terminal opens in May."),
    ("Demand for grain rose as the harbour's capacity was conti-", "nued into the winter.",
     "Demand for grain rose as the harbour's capacity was continued into the winter."),
    ("Our partners in the joint venture with the Franco-", "German consortium agreed.",
     "Our partners in the joint venture with the Franco-German consortium agreed."),
    ("The board approved the dividend and the acquisition of the terminal at",
     "Rotterdam Harbour on favourable terms, subject to approval.",
     "The board approved the dividend and the acquisition of the terminal at Rotterdam "
     "Harbour on favourable terms, subject to approval."),
    ("Liquidity is summarised for the years ended December", "31, 2019 and 2018.",
     "Liquidity is summarised for the years ended December 31, 2019 and 2018."),
    ("Costs rose by a $0.6 million increase in", "R&D expenses.",
     "Costs rose by a $0.6 million increase in R&D expenses."),
])
def test_a_paragraph_cut_by_the_break_is_whole(first: str, second: str, joined: str):
    (block,) = blocks_of(first, second)
    assert block.element.text == joined and block.pages == [1, 2]


@pytest.mark.parametrize(("first", "second"), [
    ("Revenue grew by ten percent in the year.", "costs fell by five percent."),
    ("The outlook is set out below:", "Revenue is expected to grow by five percent."),
    ("Segment results", "Revenue grew by ten percent over the year, driven by grain."),
    ("The group expects revenue to grow in the coming year because its new",
     "Outlook"),
])
def test_a_paragraph_that_ends_or_a_label_stays_apart(first: str, second: str):
    assert len(blocks_of(first, second)) == 2


def test_page_elements_are_left_as_they_were():
    parsed = pages(html(HEAD_ROWS + rows("Revenue")), html(rows("Costs")))
    read_report(parsed)
    assert [len(e.table.rows) for page in parsed for e in page] == [3, 1]


def document(*markdown: str) -> ParsedDocument:
    return ParsedDocument(source="r.pdf", pages=[
        PageResult(page_number=n, markdown=text, elements=page)
        for n, (text, page) in enumerate(zip(markdown, pages(*markdown), strict=True), 1)])


def test_continued_rows_are_chunked_under_their_header_and_intro():
    doc = document("Cash flows were as follows:\n\n" + html(HEAD_ROWS + rows("Revenue")),
                   html(rows("Free cash flow")))
    (chunk,) = chunk_document(doc, 256)
    assert chunk.pages == [1, 2]
    assert "Free cash flow was 1,110 in 2019." in chunk.text
    (alone,) = [c for c in chunk_document(doc, 256, page_breaks=True) if c.pages == [2]]
    assert "2019" not in alone.text      # a page read alone: the years are on page 1


def test_a_joined_table_too_large_for_a_chunk_is_split_at_the_break_first():
    labels = [f"Line item number {n}" for n in range(30)]
    doc = document("Cash flows were as follows:\n\n" + html(HEAD_ROWS + rows(*labels[:15])),
                   html(rows(*labels[15:])))
    chunks = chunk_document(doc, 200)
    assert len(chunks) >= 2 and {tuple(c.pages) for c in chunks} <= {(1,), (2,)}
    for chunk in chunks:
        assert chunk.text.startswith("Cash flows were as follows:")
        assert "Table\nYear ended December 31, 2019 | 2018\n" in chunk.text


def test_a_paragraph_cut_by_the_break_is_in_one_chunk_listing_both_pages():
    doc = document("# Outlook\n\nThe group expects revenue to grow because its new",
                   "terminal opens in May.\n\n## Risks\n\nWeather.")
    first = chunk_document(doc, 256)[0]
    assert "because its new terminal opens in May." in first.text and first.pages == [1, 2]


def test_a_running_header_under_a_page_number_is_furniture():
    texts = [f"{n}\n\nAcme Corp\n\nIntro {n} of the year.\n\nMore text {n}.\n\n2019 Annual Report"
             for n in range(1, 5)]
    for page in pages(*texts):
        assert [e.kind for e in page] == ["page_furniture", "page_furniture", "paragraph",
                                          "paragraph", "page_furniture"]


def test_dashes_for_missing_values_say_nothing_of_a_column():
    first = html("<tr><td></td><td>2019</td><td>2018</td></tr>"
                 "<tr><td>New plan</td><td>$28,318</td><td>$—</td></tr>")
    (table,) = blocks_of(first, html("<tr><td>Old plan</td><td>898</td><td>7,207</td></tr>"))
    assert table.pages == [1, 2]


def test_a_list_item_cut_by_the_break_runs_on_in_the_next_paragraph():
    (block,) = blocks_of("1. Licences: revenue is recognised at a point in time.\n"
                         "2. Maintenance: revenue is deferred and is subseq-",
                         "uently recognised over the period of service.")
    assert block.element.kind == "list" and block.pages == [1, 2]
    assert block.element.text.endswith("is subsequently recognised over the period of service.")


def test_a_line_on_both_pages_of_a_two_page_file_is_furniture():
    texts = [f"Contoso Group\n\nBody {n} is here.\n\nMore body {n}.\n\nPage {n}" for n in (1, 2)]
    for page in pages(*texts):
        assert page[0].kind == "page_furniture"


def test_split_continued_rows_read_as_sentences_with_their_years():
    labels = [f"Deferred item number {n}" for n in range(24)]
    doc = document("Deferred taxes were as follows:\n\n" + html(HEAD_ROWS + rows(*labels[:12])),
                   html(rows(*labels[12:])))
    chunks = chunk_document(doc, 160)
    last = chunks[-1]
    assert last.pages == [2]
    assert "Deferred item number 23 was 12,1120 in 2019." in last.text
