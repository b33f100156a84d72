"""The shared chunker: budgets, heading paths, page spans, tables never split mid-row."""

from __future__ import annotations

from ovisocr_loader import PageResult, ParsedDocument, chunk_document
from ovisocr_loader.elements import parse_page
from ovisocr_loader.elements.token_estimate import approx_tokens


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


def test_table_and_formula_within_the_budget_are_never_split():
    rows = "".join(f"<tr><td>item {i}</td><td>{i}.0</td></tr>" for i in range(6))
    table = f"<table><tr><th>Item</th><th>Value</th></tr>{rows}</table>"
    formula = "$$\n" + " + ".join(f"x_{i}" for i in range(30)) + "\n$$"
    doc = _doc(f"Intro paragraph.\n\n{table}\n\n{formula}")
    chunks = chunk_document(doc, max_tokens=130)  # the formula alone is 119 word pieces
    holding = [c for c in chunks if any(e.kind == "table" for e in c.elements)]
    assert len(holding) == 1 and "item 5 Value: 5.0." in holding[0].text
    formula_chunks = [c for c in chunks if any(e.kind == "formula" for e in c.elements)]
    assert len(formula_chunks) == 1 and "x_0 " in formula_chunks[0].text
    assert "x_29" in formula_chunks[0].text
    assert all(approx_tokens(c.text) <= 130 for c in chunks)


def test_formula_larger_than_the_budget_is_split_by_lines_only():
    lines = [f"a_{{{i}}} &= b_{{{i}}} + c_{{{i}}} \\\\" for i in range(30)]
    doc = _doc("$$\n\\begin{aligned}\n" + "\n".join(lines) + "\n\\end{aligned}\n$$")
    chunks = chunk_document(doc, max_tokens=60)
    assert len(chunks) > 1 and all(approx_tokens(c.text) <= 60 for c in chunks)
    every = [line for c in chunks for line in c.text.splitlines()]
    assert every[2:-2] == lines   # whole lines, in order, none cut


def test_oversized_table_is_split_by_rows_with_the_header_repeated():
    rows = "".join(f"<tr><td>analyte {i}</td><td>{i}</td></tr>" for i in range(80))
    doc = _doc(f"<table><thead><tr><td>Analyte</td><td>Value</td></tr></thead>{rows}</table>")
    chunks = chunk_document(doc, max_tokens=100)
    assert len(chunks) > 2
    for chunk in chunks:
        lines = chunk.text.splitlines()
        assert lines[:2] == ["Table", "Analyte | Value"]
        assert all(line.startswith("analyte ") for line in lines[2:])
        assert approx_tokens(chunk.text) <= 100
    every = [line for c in chunks for line in c.text.splitlines()[2:]]
    assert every == [f"analyte {i} | {i}" for i in range(80)]


def test_chunk_text_with_separators_stays_within_the_budget():
    # twelve 10-token paragraphs: without counting "\n\n" five would fill 50 and overflow
    doc = _doc("\n\n".join(f"Paragraph {i:02d} is here ok" for i in range(12)))
    for budget in (16, 30, 50, 51, 64):
        chunks = chunk_document(doc, max_tokens=budget)
        assert all(approx_tokens(c.text) <= budget for c in chunks)
        assert sum(c.text.count("Paragraph") for c in chunks) == 12


def test_a_heading_that_fills_the_budget_keeps_the_start_of_its_text():
    heading = "# " + " ".join(f"word{i}" for i in range(40))     # ~62 tokens
    body = "First sentence of the section. Second sentence follows here."
    doc = _doc(f"Before.\n\n{heading}\n\n{body}")
    chunks = chunk_document(doc, max_tokens=64)
    assert all(approx_tokens(c.text) <= 64 for c in chunks)
    with_heading = [c for c in chunks if any(e.kind == "heading" for e in c.elements)]
    last = with_heading[-1]
    assert "First" in last.text and last.text.index("word39") < last.text.index("First")
    words = " ".join(c.text for c in chunks).split()
    assert [w for w in words if w.startswith("word")] == [f"word{i}" for i in range(40)]


def test_a_heading_never_ends_a_chunk_when_its_text_does_not_fit_beside_it():
    body = " ".join(f"Sentence {i} of the methods section." for i in range(30))
    doc = _doc(f"Intro text that is fairly long, {'x' * 150}.\n\n## Methods\n\n{body}")
    chunks = chunk_document(doc, max_tokens=60)
    assert all(approx_tokens(c.text) <= 60 for c in chunks)
    for chunk in chunks:
        if any(e.kind == "heading" for e in chunk.elements):
            assert chunk.elements[-1].kind != "heading"
            assert "Sentence 0 of" in chunk.text


def test_long_paragraph_is_split_by_sentences():
    sentences = [f"This is sentence number {i} of a long paragraph." for i in range(40)]
    chunks = chunk_document(_doc(" ".join(sentences)), max_tokens=50)
    assert len(chunks) > 3 and all(approx_tokens(c.text) <= 50 for c in chunks)
    for chunk in chunks:
        assert chunk.text.startswith("This is sentence") and chunk.text.endswith("paragraph.")


def test_split_table_repeats_the_composed_two_row_header():
    rows = "".join(f"<tr><td>c{i}</td><td>{i}.1</td><td>{i}.2</td></tr>" for i in range(40))
    table = ("<table><thead><tr><th rowspan=2>Compound</th><th colspan=2>Recovery</th></tr>"
             f"<tr><th>Soxtec</th><th>PLE</th></tr></thead>{rows}</table>")
    chunks = chunk_document(_doc(table), max_tokens=80)
    assert len(chunks) > 2
    assert all(c.text.splitlines()[:2] == ["Table", "Compound | Recovery Soxtec | PLE"]
               for c in chunks)
    lines = [line for c in chunks for line in c.text.splitlines()[2:]]
    assert lines == [f"c{i} | {i}.1 | {i}.2" for i in range(40)]


def test_a_paragraph_starts_a_new_chunk_once_the_chunk_is_half_full():
    long = "The quay was rebuilt in stone over two summers. " * 5   # about 60 tokens
    short = "Dredging followed in spring."                           # about 7 tokens
    chunks = chunk_document(_doc(f"{long}\n\n{short}"), max_tokens=100)
    assert [c.text for c in chunks] == [long.strip(), short]
    # under half full, the next paragraph joins
    together = chunk_document(_doc(f"{short}\n\n{short}"), max_tokens=100)
    assert [c.text for c in together] == [f"{short}\n\n{short}"]


def test_cjk_prose_without_spaces_splits_between_characters():
    sentence = "全县茶叶生产基地建设规模逐渐扩大" * 8 + "，截至2010年上半年完成项目总投资1953万元。"
    doc = _doc(f"# 改善生态\n\n{sentence}\n\n{sentence}")
    chunks = chunk_document(doc, max_tokens=40)
    assert all(approx_tokens(c.text) <= 40 for c in chunks)
    assert chunks[0].text.startswith("# 改善生态\n\n全县")   # the heading keeps its text
    body = "".join(c.text.replace("# 改善生态", "") for c in chunks)
    assert "".join(body.split()) == sentence * 2              # nothing lost or repeated
    assert any("2010" in c.text for c in chunks)              # a number is never cut
    assert not any(c.text.endswith(("20", "201")) for c in chunks)


def test_a_table_after_prose_opens_a_chunk_read_by_a_256_token_embedding_model():
    prose = "The quay was rebuilt in stone over two summers. " * 7   # about 80 tokens
    rows = "".join(f"<tr><td>Berth {i}</td><td>{i}1.5</td><td>{i}2.5</td></tr>"
                   for i in range(8))
    table = f"<table><tr><td></td><td>2019</td><td>2018</td></tr>{rows}</table>"
    doc = _doc(f"{prose}\n\n{table}")
    # over a quarter of 256 tokens of prose: the table opens a chunk at any budget ...
    for budget in (256, 512, 2048):
        chunks = chunk_document(doc, max_tokens=budget)
        assert [c.text for c in chunks][:1] == [prose.strip()] and len(chunks) == 2
        assert "Berth 0" in chunks[1].text and "Berth 7" in chunks[1].text
    # ... and joins the prose when the prose is shorter than that
    short = chunk_document(_doc(f"{prose[:150]}\n\n{table}"), max_tokens=2048)
    assert len(short) == 1 and "Berth 7" in short[0].text


def test_a_table_kept_elsewhere_leaves_its_heading_with_the_text_after_it():
    """A table with no text (Mistral OCR's ``[tbl-0.html](tbl-0.html)``, an empty
    ``<table>``) places nothing, so it closes no chunk: a heading half a chunk long
    before it stays with the paragraph after it."""
    heading = "# The quarterly and annual results of the company and all of its subsidiaries"
    for table in ("[tbl-0.html](tbl-0.html)", "<table></table>"):
        doc = _doc(f"{heading}\n\n{table}\n\nThe revenue grew by ten percent this year.")
        (chunk,) = chunk_document(doc, max_tokens=32)
        assert chunk.text.endswith("The revenue grew by ten percent this year.")
