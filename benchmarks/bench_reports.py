"""Retrieval over multi-page reports: what crosses a page break, for every chunker.

Method (docs/benchmarks.md, "Whole reports"):
1. ``report_set`` lays the TAT-QA test contexts out as reports of several pages
   (running furniture on every page, tables and paragraphs cut by page breaks as
   print cuts them, three layouts, three table styles); each half of the set (contexts
   at even, at odd positions) makes reports of its own: ``--half a`` to tune, ``b``
   to report apart (default: both, each reported apart).
2. The reports are PDFs served by the simulator and read as users read them
   (``bench_retrieval.read_inputs``: ``SimpleDirectoryReader`` with ``OvisReader``,
   per-page Documents; ``OvisLoader``); every chunker gets those Documents, and the
   splitter also each whole file's text (``LC Recursive, whole file flattened``).
3. Dense (all-MiniLM-L6-v2) and BM25 hit@5 as in bench_retrieval, counting only the
   chunks of the question's own report; questions whose evidence stands in a table's
   continuation are reported apart.
4. Structure, per chunker: of the continued rows found in some chunk, the share found
   with the table's column labels; of the paragraphs cut mid-sentence by a break, the
   share read whole in one chunk (listing both pages, where the chunker gives pages); the share
   of chunks holding a running header or footer line.

    python benchmarks/bench_reports.py [--half a|b] [--budgets 256 512] [--chunkers ...]
"""

from __future__ import annotations

import argparse
import sys
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_retrieval import WORKDIR, run
from report_set import Report, load_reports
from retrieval_chunkers import OURS, PACKAGE, REPORT_CHUNKERS, RetrievalChunk, docling_available
from retrieval_set import DEFAULT_DATA, HALVES, covers, normalise

#: the issue's targets: (label, ranker, questions, least margin over the best other)
TARGETS = (("continuations, dense", "dense", "continuation", 0.10),
           ("all, dense", "dense", "all", 0.05), ("all, BM25", "bm25", "all", 0.0))


def hit5(score: Any, keep: list[bool]) -> float:
    """hit@5 over the questions ``keep`` marks (Score.answers is in question order)."""
    firsts = [first for (_, _, first), kept in zip(score.answers, keep, strict=True) if kept]
    return sum(1 for f in firsts if f is not None and f <= 5) / max(1, len(firsts))


def rows_with_header(chunks: list[RetrievalChunk], reports: list[Report]) -> float:
    """Of the continued rows some chunk holds (label and first value), the share held by
    a chunk that also names the table's columns."""
    found = with_header = 0
    for report in reports:
        own = [c.content for c in chunks if c.page == report.file_name]
        for table in report.continued_tables:
            for row in table.rows:
                values = [c for c in row[1:] if c.strip()]
                wanted = [row[0].strip(), values[0]] if row[0].strip() and values else []
                holding = [text for text in own if wanted and covers(text, wanted)]
                if holding:
                    found += 1
                    with_header += any(covers(text, table.column_labels) for text in holding)
    return with_header / max(1, found)


def paragraphs_whole(chunks: list[RetrievalChunk], reports: list[Report]) -> float:
    """Of the paragraphs cut by a page break, the share read whole in one chunk (the words
    either side of the cut, a hyphenated word rejoined), and listing both pages when
    the chunker gives pages."""
    whole = total = 0
    for report in reports:
        own = [c for c in chunks if c.page == report.file_name]
        for cut in report.broken_paragraphs:
            total += 1
            joined = normalise(_rejoined(cut.before, cut.after))
            both = {str(cut.page), str(cut.page + 1)}
            whole += any(joined in normalise(c.content)
                         and (not c.pages or both <= set(c.pages.split(","))) for c in own)
    return whole / max(1, total)


def _rejoined(before: str, after: str) -> str:
    if before.endswith("-") and after[:1].islower():
        return before[:-1] + after
    return f"{before} {after}"


def running_lines(chunks: list[RetrievalChunk], reports: list[Report]) -> float:
    """The share of chunks holding a running header or footer line."""
    lines = {r.file_name: r.furniture_lines for r in reports}
    held = sum(1 for c in chunks if any(line in c.content for line in lines.get(c.page, [])))
    return held / max(1, len(chunks))


def report(results: dict[str, Any], reports: list[Report], label: str) -> str:
    questions = [q for r in reports for q in r.questions]
    continuation = [q.uid in r.continuation for r in reports for q in r.questions]
    text = [q.source == "text" for q in questions]
    everything = [True] * len(questions)
    lines = [f"{label}: {len(reports)} reports, {sum(len(r.markdown) for r in reports)} pages, "
             f"{len(questions)} questions ({sum(continuation)} on a table's continuation), "
             f"{sum(len(r.continued_tables) for r in reports)} tables and "
             f"{sum(len(r.broken_paragraphs) for r in reports)} paragraphs cut mid-sentence "
             "by a break"]
    for budget in sorted({r["budget"] for r in results.values()}):
        lines += ["", f"Budget {budget}:", "",
                  "| chunker | chunks | dense hit@5 | continuations | text | BM25 hit@5 "
                  "| BM25 continuations | rows with header | paragraphs whole "
                  "| chunks with running line |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for result in (r for r in results.values() if r["budget"] == budget):
            chunks = result["chunk_list"]
            cells = [hit5(result["dense"], everything), hit5(result["dense"], continuation),
                     hit5(result["dense"], text), hit5(result["bm25"], everything),
                     hit5(result["bm25"], continuation), rows_with_header(chunks, reports),
                     paragraphs_whole(chunks, reports), running_lines(chunks, reports)]
            lines.append(f"| {result['chunker']} | {result['chunks']} | "
                         + " | ".join(f"{c:.3f}" for c in cells) + " |")
        lines += ["", *_margins(results, budget, {"all": everything,
                                                  "continuation": continuation})]
    return "\n".join(lines)


def _margins(results: dict[str, Any], budget: int, groups: dict[str, list[bool]]
             ) -> list[str]:
    at = [r for r in results.values() if r["budget"] == budget]
    ours = [r for r in at if r["chunker"] in OURS]
    others = [r for r in at if r["chunker"] not in PACKAGE]
    lines = []
    for label, ranker, group, least in TARGETS:
        if not ours or not others:
            break
        worst = min(hit5(r[ranker], groups[group]) for r in ours)
        best = max(others, key=lambda r: hit5(r[ranker], groups[group]))
        margin = worst - hit5(best[ranker], groups[group])
        verdict = "met" if round(margin, 9) >= least and (least or margin > 0) else "NOT met"
        lines.append(f"- {label}: ours (worse of two) {worst:.3f}, best other "
                     f"({best['chunker']}) {hit5(best[ranker], groups[group]):.3f}, margin "
                     f"{margin:+.3f} (target {least:+.2f}): {verdict}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--half", choices=HALVES, default=None,
                    help="one half of the set (default: both, each reported apart)")
    ap.add_argument("--seed", type=int, default=0, help="the layout draw")
    ap.add_argument("--budgets", type=int, nargs="+", default=[256, 512])
    ap.add_argument("--chunkers", nargs="+", choices=list(REPORT_CHUNKERS),
                    default=list(REPORT_CHUNKERS))
    ap.add_argument("--workdir", type=Path, default=WORKDIR)
    args = ap.parse_args(argv)
    if not args.data.is_file():
        print(f"no retrieval data at {args.data}: skipped (give --data)")
        return 0
    names = [n for n in args.chunkers if n != "docling HybridChunker" or docling_available()]
    for half in [args.half] if args.half else list(HALVES):
        reports = load_reports(args.data, half, args.seed)
        with redirect_stdout(sys.stderr):
            results = run(reports, args.budgets, names, args.workdir,  # type: ignore[arg-type]
                          chunkers=REPORT_CHUNKERS)
        print(report(results, reports, f"half {half}"))
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
