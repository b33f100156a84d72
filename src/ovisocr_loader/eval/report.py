"""Evaluations and comparisons as a text table, JSON or CSV (one row per document)."""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import asdict
from typing import Any, Literal

from .scores import FLAGS, Comparison, DocumentScore, Evaluation, Summary, percentile, summarise

ReportFormat = Literal["table", "json", "csv"]


def evaluation_report(evaluation: Evaluation, fmt: ReportFormat = "table",
                      worst: int = 5) -> str:
    summary = summarise(evaluation, worst)
    if fmt == "json":
        return _json({"summary": asdict(summary),
                      "documents": [_document_row(d) for d in evaluation.documents],
                      "without_reference": evaluation.without_reference,
                      "problems": evaluation.problems})
    if fmt == "csv":
        return _csv([_document_row(d, pages=False) for d in evaluation.documents])
    lines = _summary_lines(summary)
    if evaluation.without_reference:
        lines.append(f"without a reference: {len(evaluation.without_reference)} "
                     f"({', '.join(evaluation.without_reference[:5])}"
                     f"{', ...' if len(evaluation.without_reference) > 5 else ''})")
    return "\n".join(lines) + "\n"


def _summary_lines(summary: Summary) -> list[str]:
    flagged = ", ".join(f"{summary.flagged[flag]} {flag}" for flag in FLAGS)
    lines = [f"documents with a reference: {summary.documents}",
             f"word F1: mean {_f(summary.mean)}, median {_f(summary.median)}, "
             f"p10 {_f(summary.p10)} (precision {_f(summary.precision)}, "
             f"recall {_f(summary.recall)})",
             f"pages: {summary.pages} ({flagged})"]
    if summary.worst:
        lines.append("worst documents:")
        lines += [f"  {_f(f1)}  {name}" for name, f1 in summary.worst]
    return lines


def comparison_report(comparison: Comparison, fmt: ReportFormat = "table",
                      count: int = 5) -> str:
    summaries = None if comparison.evaluations is None else tuple(
        summarise(e, count) for e in comparison.evaluations)
    if comparison.with_reference:
        rows = [{"document": p.name, "a": round(p.a, 4), "b": round(p.b, 4),
                 "difference": round(p.difference, 4)} for p in comparison.pairs]
    else:
        rows = [{"document": p.name, "agreement": round(p.a, 4)} for p in comparison.pairs]
    if fmt == "csv":
        return _csv(rows)
    if fmt == "table":
        return "\n".join(_comparison_lines(comparison, summaries, count)) + "\n"
    body: dict[str, Any] = {"with_reference": comparison.with_reference,
                            "documents": rows, "only_a": comparison.only_a,
                            "only_b": comparison.only_b}
    if summaries is not None:
        a, b = summaries
        body.update(a=asdict(a), b=asdict(b), tie_margin=comparison.margin,
                    wins=comparison.wins, losses=comparison.losses, ties=comparison.ties)
    return _json(body)


def _comparison_lines(comparison: Comparison, summaries: tuple[Summary, ...] | None,
                      count: int) -> list[str]:
    lines: list[str] = []
    if summaries is not None:
        a, b = summaries
        lines += ["             A        B",
                  f"documents {a.documents:>5}    {b.documents:>5}"]
        for key in ("mean", "median", "p10"):
            lines.append(f"{key:<9} {_f(getattr(a, key)):>6}   {_f(getattr(b, key)):>6}")
        lines.append(f"head to head (tie margin {comparison.margin:g}): A better on "
                     f"{comparison.wins}, B better on {comparison.losses}, "
                     f"ties {comparison.ties}")
        lines.append("largest differences (A - B):")
        lines += [f"  {p.difference:+.3f}  {p.name}  (A {_f(p.a)}, B {_f(p.b)})"
                  for p in comparison.most_different(count)]
    else:
        agreement = [p.a for p in comparison.pairs]
        mean = sum(agreement) / len(agreement) if agreement else float("nan")
        lines += [f"documents in both runs: {len(comparison.pairs)}",
                  f"agreement of A and B (word F1 of one against the other): mean {_f(mean)}, "
                  f"median {_f(percentile(agreement, 0.5))}, "
                  f"p10 {_f(percentile(agreement, 0.1))}",
                  "least agreement (worth a look):"]
        lines += [f"  {_f(p.a)}  {p.name}" for p in comparison.most_different(count)]
    for side, names in (("A", comparison.only_a), ("B", comparison.only_b)):
        if names:
            lines.append(f"only in {side}: {len(names)} ({', '.join(names[:5])})")
    return lines


def _document_row(d: DocumentScore, pages: bool = True) -> dict[str, Any]:
    row: dict[str, Any] = {"document": d.name, "precision": round(d.score.precision, 4),
                           "recall": round(d.score.recall, 4), "f1": round(d.score.f1, 4),
                           "output_words": d.score.output_words,
                           "reference_words": d.score.reference_words,
                           "pages": sum(d.statuses.values()),
                           **{flag: d.statuses.get(flag, 0) for flag in FLAGS}}
    if pages and d.page_scores is not None:
        row["page_f1"] = {str(n): round(s.f1, 4) for n, s in d.page_scores}
    return row


def table_rows(rows: list[dict[str, Any]], fmt: ReportFormat) -> str:
    """Rows as JSON (a list under ``rows``) or CSV."""
    return _json({"rows": rows}) if fmt == "json" else _csv(rows)


def _f(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3f}"


def _json(body: dict[str, Any]) -> str:
    return json.dumps(_no_nan(body), indent=2, allow_nan=False) + "\n"


def _no_nan(value: Any) -> Any:
    """JSON has no NaN: a score of nothing (no documents) is null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_no_nan(v) for v in value]
    return value


def _csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    if rows:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return out.getvalue()
