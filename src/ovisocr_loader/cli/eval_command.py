"""``ovisocr eval`` (word F1 of a run, or of scans parsed at several DPIs) and
``ovisocr compare`` (two runs head to head).

Exit status: 0 every document scored; 1 scored, but some document had no reference,
could not be read, or its page references did not match; 2 nothing to score.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import OvisLoaderError
from ..eval import (
    EvalInputError,
    Reference,
    compare,
    comparison_report,
    dpi_sweep,
    evaluate,
    evaluation_report,
    load_references,
    load_run,
    sweep_report,
    write_plots,
)
from ..sources import expand_paths
from ..sources.detect import SUPPORTED_SUFFIXES
from ..writes import write_failure
from .arguments import EXIT_FAILED, EXIT_OK, EXIT_UNUSABLE
from .parse_command import parser_options, say


def run_eval(args: argparse.Namespace) -> int:
    references = _references(args.reference)
    if references is None:
        return EXIT_UNUSABLE
    refs, problems = references
    scans = _scans(args.paths)
    if scans is None:
        return EXIT_UNUSABLE
    if scans:
        return _sweep(args, scans, refs, problems)
    try:
        run = load_run(args.paths)
    except EvalInputError as exc:
        say(str(exc))
        return EXIT_UNUSABLE
    evaluation = evaluate(run, refs)
    evaluation.problems[:0] = problems
    for problem in evaluation.problems:
        say(problem)
    for name in evaluation.without_reference:
        say(f"{name}: no reference transcription matches it")
    if not evaluation.documents:
        say("nothing to score: no output document has a reference" if run.documents
            else "nothing to score: no .md or .json output found")
        return EXIT_UNUSABLE
    sys.stdout.write(evaluation_report(evaluation, args.format, args.worst))
    return EXIT_FAILED if evaluation.problems or evaluation.without_reference else EXIT_OK


def run_compare(args: argparse.Namespace) -> int:
    refs: dict[str, Reference] | None = None
    problems: list[str] = []
    if args.reference:
        references = _references(args.reference)
        if references is None:
            return EXIT_UNUSABLE
        refs, problems = references
    try:
        run_a, run_b = load_run([args.a]), load_run([args.b])
    except EvalInputError as exc:
        say(str(exc))
        return EXIT_UNUSABLE
    comparison = compare(run_a, run_b, refs, args.tie_margin)
    problems += run_a.problems + run_b.problems
    if comparison.evaluations is not None:
        for evaluation in comparison.evaluations:
            problems += [p for p in evaluation.problems if p not in problems]
    for problem in problems:
        say(problem)
    if not comparison.pairs:
        say("nothing to compare: no document is in both runs" + (" with a reference"
                                                                   if refs is not None else ""))
        return EXIT_UNUSABLE
    sys.stdout.write(comparison_report(comparison, args.format, args.worst))
    if args.plot:
        try:
            for path in write_plots(comparison, args.plot):
                say(f"wrote {path}")
        except OSError as exc:
            say(f"cannot write {write_failure(exc, args.plot)}")
            return EXIT_FAILED
    unmatched = comparison.only_a or comparison.only_b or (
        comparison.evaluations is not None and comparison.evaluations[0].without_reference)
    return EXIT_FAILED if problems or unmatched else EXIT_OK


def _references(paths: list[str]) -> tuple[dict[str, Reference], list[str]] | None:
    try:
        refs, problems = load_references(paths)
    except EvalInputError as exc:
        say(f"--reference {exc}")
        return None
    if not refs:
        say(f"--reference {' '.join(paths)}: no .txt or .md reference transcription found")
        return None
    return refs, problems


def _scans(paths: list[str]) -> list[Path] | None:
    """The scans to parse, [] when the inputs are outputs, None when they mix."""
    files = [p for p in expand_paths(paths) if p.is_file()]
    scans = [p for p in files if p.suffix.lower() in SUPPORTED_SUFFIXES]
    if scans and len(scans) < len(files):
        say("give either outputs of `ovisocr parse` (.md, .json) or scans, not both")
        return None
    return scans


def _sweep(args: argparse.Namespace, scans: list[Path], refs: dict[str, Reference],
           problems: list[str]) -> int:
    for problem in problems:
        say(problem)
    options = parser_options(args)
    try:
        results = dpi_sweep(scans, refs, args.dpi, password=args.password, pages=args.pages,
                            **options)
    except (OvisLoaderError, ImportError) as exc:
        say(str(exc))
        return EXIT_UNUSABLE
    if not any(r.evaluation.documents for r in results):
        say("nothing to score: no scan has a reference")
        return EXIT_UNUSABLE
    sys.stdout.write(sweep_report(results, args.format))
    missing = results[0].evaluation.without_reference
    for name in missing:
        say(f"{name}: no reference transcription matches it")
    return EXIT_FAILED if problems or missing else EXIT_OK
