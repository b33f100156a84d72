"""The multi-page report benchmark never rots: its pagination, and a run on a small set."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

from report_set import load_reports  # noqa: E402


def _context(n: int) -> dict[str, object]:
    grid = [["", "2019", "2018"], *([f"Harbour {n} item {k}", f"{n}{k},120", f"{n}{k},080"]
                                    for k in range(18))]
    prose = " ".join(f"Port {n} traffic grew in quarter {k} as more ships called."
                     for k in range(12))
    questions = [{"uid": f"q{n}_{k}", "order": k, "answer_type": "span", "answer_from": "table",
                  "question": f"What was harbour {n} item {k} in 2019?",
                  "answer": [f"{n}{k},120"], "derivation": ""} for k in range(18)]
    return {"table": {"uid": f"c{n}", "table": grid},
            "paragraphs": [{"uid": f"p{n}", "order": 1, "text": prose},
                           {"uid": f"i{n}", "order": 2,
                            "text": f"Port {n} fees are as follows (in euros):"}],
            "questions": questions}


def _data(folder: Path) -> Path:
    data = folder / "set.json"
    data.write_text(json.dumps([_context(n) for n in range(1, 9)]))
    return data


def test_reports_are_paginated_as_print_cuts_them(tmp_path: Path):
    reports = load_reports(_data(tmp_path), "a", per_report=(4, 4))
    assert [r.file_name for r in reports] == ["a_0001.pdf"]     # contexts 1, 3, 5, 7
    (report,) = reports
    assert len(report.markdown) >= 3 and report.continued_tables and report.broken_paragraphs
    assert report.continuation and report.continuation < {q.uid for q in report.questions}
    for number, page in enumerate(report.markdown, 1):
        assert any(line in page for line in report.furniture_lines)
        assert str(number) in page
    cut = report.broken_paragraphs[0]
    page = report.markdown[cut.page - 1]
    assert cut.before in page and cut.after in report.markdown[cut.page]


def test_the_report_benchmark_runs_on_a_small_set(tmp_path: Path):
    result = subprocess.run(
        [sys.executable, str(BENCH / "bench_reports.py"), "--data", str(_data(tmp_path)),
         "--half", "b", "--workdir", str(tmp_path / "run"), "--budgets", "128", "--chunkers",
         "OvisNodeParser", "OvisLoader chunks", "LC Recursive, whole file flattened"],
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ")
            for line in result.stdout.splitlines() if line.startswith("| ")
            and "chunker" not in line and "---" not in line}
    assert set(rows) == {"OvisNodeParser", "OvisLoader chunks",
                         "LC Recursive, whole file flattened"}
    assert rows["OvisNodeParser"][7:9] == ["1.000", "1.000"]    # rows with header, paragraphs
    assert rows["OvisNodeParser"][9].startswith("0.000")          # no running line in chunks
    assert "- continuations, dense: ours (worse of two)" in result.stdout
