"""The token-estimate benchmark never rots: a row on pages written here."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from bench_token_estimate import as_document, chunking_ms, report


def test_a_row_compares_both_rules_against_word_pieces():
    pages = ["# 营业收入\n\n" + "常熟银行发布半年报，上半年公司实现营业收入四十九亿元。" * 12,
             "Revenue rose.\n\n<table><tr><td></td><td>2019</td></tr>"
             "<tr><td>Revenue</td><td>1,320</td></tr></table>"]
    documents = [as_document(md) for md in pages]
    row = report("mixed", documents, 64).strip("| ").split(" | ")
    assert row[0] == "mixed" and len(row) == 5
    estimate, four = (tuple(int(v) for v in cell.split(" / ")) for cell in (row[1], row[3]))
    assert estimate[1] < four[1]            # fewer chunks past 64 word pieces than 4 chars
    assert float(row[2].split(" / ")[0]) > float(row[4].split(" / ")[0])
    assert chunking_ms(documents, 64) > 0
