"""A table's notes: which paragraphs under a table explain it, and how the chunker
keeps them with it."""

from __future__ import annotations

import pytest

from ovisocr_loader import PageResult, ParsedDocument, chunk_document
from ovisocr_loader.chunking.table_notes import cited_rows, is_table_note
from ovisocr_loader.elements import parse_page, parse_table
from ovisocr_loader.elements.token_estimate import approx_tokens

NOTED = parse_table(
    "<table><tr><td></td><td>2019</td><td>2018</td></tr>"
    "<tr><td>Operating income (1)</td><td>5</td><td>6</td></tr>"
    "<tr><td>Accruals2</td><td>49.3</td><td>43.2</td></tr>"
    "<tr><td>Sensors*</td><td>914</td><td>918</td></tr>"
    "<tr><td>Other (1)</td><td>1</td><td>2</td></tr></table>")


@pytest.mark.parametrize("text", [
    "(1) Includes acquisition charges.", "1) Includes acquisition charges.",
    "[1] Includes acquisition charges.", "1 Includes acquisition charges.",
    "2. In 2018, grants were included within accruals.", "2 Includes grants.",
    "* Restated for the merger.", "Note: amounts are unaudited.", "Notes", "Source: annual report.",
])
def test_a_paragraph_opening_with_a_mark_the_table_uses_is_its_note(text: str):
    assert is_table_note(text, NOTED)


@pytest.mark.parametrize("text", [
    "(3) A mark no cell carries.", "3. A numbered point the table does not cite.",
    "Notes to the consolidated financial statements", "12 months ended in June.",
    "Revenue grew in 2019.", "† A mark no cell carries.",
])
def test_other_paragraphs_under_a_table_are_not_its_notes(text: str):
    assert not is_table_note(text, NOTED)


def test_a_mark_is_not_found_inside_a_longer_one_or_a_word():
    table = parse_table("<table><tr><td>(In millions, except per share data)</td><td>2019</td>"
                        "</tr><tr><td>Total obligations (11)</td><td>5</td></tr>"
                        "<tr><td>Leases (1)</td><td>4</td></tr></table>")
    assert cited_rows("(1) Operating leases include renewals.", table) == "Leases (1)"
    assert not is_table_note("(a) Represents an impairment.", table)
    assert not is_table_note("(4) Represents an impairment.", table)


def test_a_note_names_the_rows_that_cite_it():
    assert cited_rows("(1) Includes acquisition charges.", NOTED) == (
        "Operating income (1); Other (1)")
    assert cited_rows("2. In 2018, grants were included.", NOTED) == "Accruals2"
    assert cited_rows("Note: amounts are unaudited.", NOTED) == ""


def _chunks(markdown: str, max_tokens: int) -> list[str]:
    page = PageResult(page_number=1, markdown=markdown, elements=parse_page(markdown, 1))
    doc = ParsedDocument(source="t.pdf", total_pages=1, pages=[page])
    return [c.text for c in chunk_document(doc, max_tokens=max_tokens)]


def _table(rows: int) -> str:
    body = "".join(f"<tr><td>Vessel {i}</td><td>{1000 + i}</td></tr>" for i in range(rows))
    return ("<table><tr><td>Vessel</td><td>Tonnage</td></tr>"
            "<tr><td>Aurora (1)</td><td>1200</td></tr>" + body + "</table>")


def test_a_note_under_a_table_that_closes_its_chunk_joins_the_table():
    page = _table(12) + "\n\n(1) Chartered in 2019.\n\nThe fleet grew."
    chunks = _chunks(page, 120)
    assert chunks[0].endswith("Vessel 11 Tonnage: 1011.\n\n(1) Chartered in 2019.")
    assert chunks[1] == "The fleet grew."
    # without the mark in the table it is a paragraph like any other
    unmarked = _chunks(page.replace("Aurora (1)", "Aurora"), 120)
    assert unmarked[1:] == ["(1) Chartered in 2019.\n\nThe fleet grew."]


def test_a_note_without_room_beside_its_table_opens_with_the_rows_citing_it():
    note = "(1) Chartered in 2019 " + "under a long agreement " * 8 + "."
    chunks = _chunks(_table(20) + f"\n\n{note}\n\nThe fleet grew.", 120)
    assert chunks[-2:] == [f"Aurora (1)\n{note}", "The fleet grew."]
    assert all(approx_tokens(c) <= 120 for c in chunks)
