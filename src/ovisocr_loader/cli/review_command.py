"""``ovisocr review``: parse inputs (or load saved JSON) and write the review site.

Takes the inputs and reading options of ``ovisocr parse``; ``.json`` files
written by ``ovisocr parse --format json`` are shown as saved, without asking
the server again (their page images come from the source files, if still there).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pydantic import ValidationError

from ..config import RenderSettings
from ..document import ParsedDocument
from ..errors import OvisLoaderError
from ..jobs import DocumentJob
from ..parser import OvisParser
from ..paths import user_path
from ..review import write_site
from ..writes import check_writable_folder, shown_name, write_failure
from .arguments import EXIT_FAILED, EXIT_OK, EXIT_UNUSABLE
from .parse_command import check_inputs, parser_options, progress_mode, say
from .progress import Progress


def run_review(args: argparse.Namespace) -> int:
    saved = [p for p in args.paths if p.lower().endswith(".json")]
    docs, problems = load_saved(saved)
    others = [p for p in args.paths if p not in saved]
    files, missing = check_inputs(others, follow_links=args.follow_links) if others else ([], [])
    problems += missing
    for problem in problems:
        say(problem)
    folder = user_path(args.output)
    try:
        check_writable_folder(folder)
    except OSError as exc:
        say(f"cannot write to {write_failure(exc, folder)}")
        return EXIT_UNUSABLE
    if files:
        try:
            docs += parse(args, files)
        except (OvisLoaderError, ImportError, ValueError) as exc:
            say(str(exc))
            return EXIT_UNUSABLE
    if not docs:
        say("nothing to review")
        return EXIT_UNUSABLE
    unwritten: list[str] = []

    def not_written(doc: ParsedDocument, exc: OSError) -> None:
        unwritten.append(doc.source)
        say(f"{shown_name(doc.source)}: cannot write its review page "
            f"{write_failure(exc, folder)}")

    try:
        index = write_site(docs, folder, render=RenderSettings(dpi=args.dpi),
                           password=args.password, on_error=not_written)
    except OSError as exc:
        say(f"cannot write {write_failure(exc, folder)}")
        return EXIT_FAILED
    pages = sum(len(d.pages) for d in docs)
    flagged = sum(1 for d in docs for p in d.pages if p.flags)
    failed = sum(1 for d in docs if d.error is not None) + len(problems) + len(unwritten)
    page_errors = sum(1 for d in docs for p in d.pages if p.error is not None)
    say(f"review site: {index} ({len(docs)} documents, {pages} pages, {flagged} flagged "
        f"pages, {page_errors} page errors, {failed} files failed); open it in a browser")
    return EXIT_FAILED if failed or page_errors else EXIT_OK


def load_saved(paths: list[str]) -> tuple[list[ParsedDocument], list[str]]:
    """Documents from ``--format json`` files, and a message for each unusable one."""
    docs, problems = [], []
    for path in paths:
        try:
            text = Path(user_path(path)).read_text(encoding="utf-8")
            docs.append(ParsedDocument.model_validate(json.loads(text)))
        except OSError as exc:
            problems.append(f"{path}: cannot read ({exc.strerror or exc})")
        except (ValidationError, ValueError):
            problems.append(f"{path}: not a document written by ovisocr parse --format json")
    return docs, problems


def parse(args: argparse.Namespace, files: list[Path]) -> list[ParsedDocument]:
    """Parse ``files`` with the command's options; documents in the order given."""
    parser = OvisParser(**parser_options(args))
    parser.check()
    progress = Progress(progress_mode(args), limit=lambda: parser.concurrency_now)
    jobs = [DocumentJob(str(f), args.password, args.pages) for f in files]
    try:
        done = {d.source: d for d in parser.parse_many(jobs, on_event=progress.update)}
    finally:
        progress.close()
    return [done[str(f)] for f in files if str(f) in done]
