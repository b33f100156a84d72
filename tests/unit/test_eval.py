"""Word F1, summaries, percentiles and head-to-head counts against hand-computed values."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from ovisocr_loader import PageResult, ParsedDocument
from ovisocr_loader.cli.outputs import render_markdown
from ovisocr_loader.eval import (
    Reference,
    Run,
    RunDocument,
    RunPage,
    compare,
    evaluate,
    load_references,
    load_run,
    percentile,
    summarise,
    word_f1,
    words,
)


@pytest.mark.parametrize(("output", "reference", "precision", "recall"), [
    # markup: headings, pipe-table borders and rules are no words
    ("# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |", "Title a b 1 2", 1, 1),
    # HTML cells; a number keeps its separators; one reference word missing
    ("<table><tr><td>Net income</td><td>1,234</td></tr></table>", "Net income 1,234 USD",
     1, 3 / 4),
    # CJK: one word per character
    ("中文字", "中文 字体", 1, 3 / 4),
    # case folding and NFKC (full-width letters)
    ("Straße ＡＢＣ", "STRASSE abc", 1, 1),
    # a bag: "a" matches once, "b" once
    ("a a a b", "a b b", 2 / 4, 2 / 3),
    # grounding markers and image references carry no words
    ("<|ref|>title<|/ref|><|det|>[[1, 2, 3, 4]]<|/det|>\nReport "
     "![Figure](images/bbox_1_2_3_4.jpg) <img src='x.jpg' alt='chart'/>", "Report", 1, 1),
    # front matter (olmOCR) is no words; tags with "_" go like any other, text kept
    ("---\nprimary_language: en\nis_table: False\n---\nReport <page_number>3</page_number>",
     "Report 3", 1, 1),
    # a layout-JSON page (dots.ocr) is its cells' texts, escapes decoded
    ('[{"bbox": [1, 2, 3, 4], "category": "Title", "text": "Caf\\u00e9 \\"Nord\\""}, '
     '{"bbox": [5, 6, 7, 8], "category": "Picture"}]', "Café Nord", 1, 1),
    # links keep their text, LaTeX control words go, entities decode
    ("[annual report](http://x.y) $\\frac{a}{b}$ R&amp;D", "annual report a b R&D", 1, 1),
    ("a", "", 0, 1),          # empty reference: every output word is wrong
    ("", "a b", 1, 0),        # empty output: every reference word is missed
    ("", "", 1, 1),
])
def test_word_scores_match_hand_computed_values(output, reference, precision, recall):
    result = word_f1(output, reference)
    assert result.precision == pytest.approx(precision)
    assert result.recall == pytest.approx(recall)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0
    assert result.f1 == pytest.approx(f1)


def test_the_word_rule_joins_and_splits_as_documented():
    assert words("don't COVID-19 1,234.56 end. snake_case **bold**") == {
        "don't": 1, "covid-19": 1, "1,234.56": 1, "end": 1, "snake": 1, "case": 1, "bold": 1}


def test_percentiles_interpolate_between_ranks():
    values = [0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    assert percentile(values, 0.1) == pytest.approx(0.55)   # rank 0.5
    assert percentile(values, 0.5) == pytest.approx(statistics.median(values))
    assert percentile(values, 0.1) == pytest.approx(
        statistics.quantiles(values, n=10, method="inclusive")[0])
    assert percentile([0.3], 0.1) == 0.3


def _run(scores: dict[str, str]) -> Run:
    return Run({name: RunDocument(name, Path(f"{name}.md"), [RunPage(1, text)])
                for name, text in scores.items()})


REFS = {name: Reference(name, "one two three four five six seven eight nine ten")
        for name in ("a", "b", "c", "d")}


def test_summary_of_known_documents():
    run = _run({"a": "one two three four five six seven eight nine ten",
                "b": "one two three four five six seven eight nine xx",
                "c": "one two three four five xx xx xx xx xx",
                "d": "one two three four five six seven eight xx xx",
                "e": "no reference for this one"})
    evaluation = evaluate(run, REFS)
    assert evaluation.without_reference == ["e"]
    summary = summarise(evaluation, worst=2)
    f1 = [1.0, 0.9, 0.5, 0.8]
    assert summary.documents == 4
    assert summary.mean == pytest.approx(statistics.mean(f1))
    assert summary.median == pytest.approx(statistics.median(f1))
    assert summary.p10 == pytest.approx(statistics.quantiles(f1, n=10, method="inclusive")[0])
    assert summary.worst == [("c", pytest.approx(0.5)), ("d", pytest.approx(0.8))]


def test_head_to_head_counts_wins_losses_and_ties_by_the_margin():
    a = _run({"a": "one two three four five six seven eight nine ten",     # 1.0
              "b": "one two three four five six seven eight nine xx",      # 0.9
              "c": "one two three four five xx xx xx xx xx",               # 0.5
              "d": "one two three four five six seven eight xx xx"})       # 0.8
    b = _run({"a": "one two three four five six seven eight nine xx",      # 0.9: A wins
              "b": "one two three four five six seven eight nine xx",      # tie
              "c": "one two three four five six seven eight nine ten",     # B wins
              "d": "one two three four five six seven eight nine xx"})     # B wins
    result = compare(a, b, REFS, margin=0.05)
    assert (result.wins, result.losses, result.ties) == (1, 2, 1)
    assert [p.name for p in result.most_different(2)] == ["c", "a"]
    assert compare(a, b, REFS, margin=0.2).ties == 3   # only c differs by more than 0.2
    agreement = compare(a, b)   # no references: how far the runs agree
    assert not agreement.with_reference
    assert {p.name: round(p.a, 2) for p in agreement.pairs} == {
        "a": 0.9, "b": 1.0, "c": 0.5, "d": 0.9}


def test_outputs_in_both_formats_with_page_flags_and_page_references(tmp_path: Path):
    doc = ParsedDocument(source="scans/x.pdf", total_pages=3, pages=[
        PageResult(page_number=1, markdown="alpha beta"),
        PageResult(page_number=2, markdown="gamma 1111", loop_trimmed=True),
        PageResult(page_number=3, error={"kind": "ServerStatusError", "message": "500"})])
    (tmp_path / "out" / "scans").mkdir(parents=True)
    (tmp_path / "out" / "scans" / "x.md").write_text(render_markdown(doc))
    (tmp_path / "json").mkdir()
    (tmp_path / "json" / "x.json").write_text(doc.model_dump_json())
    (tmp_path / "refs").mkdir()
    (tmp_path / "refs" / "x.txt").write_text("alpha beta\fgamma\fdelta\f")
    references, problems = load_references([tmp_path / "refs"])
    assert problems == [] and references["x"].pages == ["alpha beta", "gamma", "delta"]
    for folder in ("out", "json"):
        run = load_run([tmp_path / folder])
        (document,) = run.documents.values()
        assert [(p.page_number, p.text, p.status) for p in document.pages] == [
            (1, "alpha beta", "ok"), (2, "gamma 1111", "loop_trimmed"), (3, "", "failed")]
        (scored,) = evaluate(run, references).documents   # matched by stem
        assert scored.statuses == {"ok": 1, "loop_trimmed": 1, "failed": 1}
        assert scored.score.matched == 3 and scored.score.output_words == 4
        assert [round(s.f1, 3) for _, s in scored.page_scores or []] == [1.0, 0.667, 0.0]
