"""The shared chunker: budgets, heading paths, page spans, tables never split mid-row."""

from __future__ import annotations

from ovisocr_loader import PageResult, ParsedDocument, chunk_document
from ovisocr_loader.elements import parse_page
from ovisocr_loader.elements.chunker import approx_tokens


def _doc(*pages: str) -> ParsedDocument:
    results = [PageResult(page_number=n, markdown=md, elements=parse_page(md, n))
               for n, md in enumerate(pages, 1)]
    return ParsedDocument(source="t.pdf", total_pages=len(pages), pages=results)


def test_heading_path_pages_and_budget():
    body = " ".join(f"Sentence number {i} about results." for i in range(60))
    doc = _doc(f"# Results\n\n## Blood tests\n\n{body}",
               f"{body}\n\n## Urine tests\n\nShort.\n\n- 7 -")
    chunks = chunk_document(doc, max_tokens=200)
    assert all(approx_tokens(c.text) <= 200 for c in chunks)
    assert chunks[0].heading_path == ["Results"] or chunks[1].heading_path == [
        "Results", "Blood tests"]
    blood = [c for c in chunks if c.heading_path == ["Results", "Blood tests"]]
    assert any(c.pages == [1, 2] for c in blood) or {1, 2} <= {p for c in blood for p in c.pages}
    urine = [c for c in chunks if c.heading_path == ["Results", "Urine tests"]]
    assert urine and urine[-1].pages == [2] and "Short." in urine[-1].text
    assert all("- 7 -" not in c.text for c in chunks)            # furniture left out
    assert [c.index for c in chunks] == list(range(len(chunks)))


def test_consecutive_headings_stay_with_the_text_they_head():
    doc = _doc("# Report\n\n## Methods\n\n### Sampling\n\nWe sampled twelve sites.\n\n"
               "## Results\n\nAll sites passed.")
    chunks = chunk_document(doc, max_tokens=200)
    assert [c.text for c in chunks] == [
        "# Report\n\n## Methods\n\n### Sampling\n\nWe sampled twelve sites.",
        "## Results\n\nAll sites passed."]
    assert [c.heading_path for c in chunks] == [["Report", "Methods", "Sampling"],
                                                ["Report", "Results"]]


def test_table_and_formula_are_never_split():
    rows = "".join(f"<tr><td>item {i}</td><td>{i}.0</td></tr>" for i in range(6))
    table = f"<table><tr><th>Item</th><th>Value</th></tr>{rows}</table>"
    formula = "$$\n" + " + ".join(f"x_{i}" for i in range(40)) + "\n$$"
    doc = _doc(f"Intro paragraph.\n\n{table}\n\n{formula}")
    chunks = chunk_document(doc, max_tokens=60)
    holding = [c for c in chunks if any(e.kind == "table" for e in c.elements)]
    assert len(holding) == 1 and "Item: item 5; Value: 5.0" in holding[0].text
    formula_chunks = [c for c in chunks if any(e.kind == "formula" for e in c.elements)]
    assert len(formula_chunks) == 1 and "x_39" in formula_chunks[0].text


def test_oversized_table_is_split_by_rows_with_the_header_repeated():
    rows = "".join(f"<tr><td>analyte {i}</td><td>{i}</td></tr>" for i in range(80))
    doc = _doc(f"<table><thead><tr><td>Analyte</td><td>Value</td></tr></thead>{rows}</table>")
    chunks = chunk_document(doc, max_tokens=100)
    assert len(chunks) > 2
    for chunk in chunks:
        lines = chunk.text.splitlines()
        assert all(line.startswith("Analyte: analyte ") for line in lines)
        assert approx_tokens(chunk.text) <= 100
    every = [line for c in chunks for line in c.text.splitlines()]
    assert every == [f"Analyte: analyte {i}; Value: {i}" for i in range(80)]
