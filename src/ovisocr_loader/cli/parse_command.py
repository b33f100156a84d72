"""``ovisocr parse``: check the inputs, check the server, parse, write, summarise.

Inputs are checked before the server is probed, so every missing or unreadable
file is named once, whatever the state of the server. Ctrl-C stops sending,
writes every finished document and what the unfinished ones have so far
(marked incomplete), says how to resume, and exits 130.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..document import PageResult, ParsedDocument
from ..errors import OvisLoaderError
from ..jobs import DocumentJob, DocumentStarted, PageFinished, ProgressEvent
from ..parser import OvisParser
from ..sources import expand_paths
from ..writes import shown_name, write_failure
from .arguments import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_UNUSABLE
from .option_flags import options_from_args
from .outputs import OutputError, OutputPlan, plan_outputs
from .progress import Progress
from .ray_command import run_parse_ray


def run_parse(args: argparse.Namespace) -> int:
    files, problems = check_inputs(args.paths, follow_links=args.follow_links)
    for problem in problems:
        say(problem)
    if not files:
        say("no input to parse" + ("" if problems else ": no supported files found"))
        return EXIT_UNUSABLE
    if args.engine == "ray":
        status = run_parse_ray(args, files, parser_options(args), say)
        return EXIT_FAILED if status == EXIT_OK and problems else status
    if "parquet" in (args.format or []) or args.ray_address or args.workers:
        say("--format parquet, --ray-address and --workers need --engine ray")
        return EXIT_UNUSABLE
    try:
        plan = plan_outputs(args.output, args.format, files)
    except OutputError as exc:
        say(str(exc))
        return EXIT_UNUSABLE
    try:
        plan.check()
    except OSError as exc:
        say(f"cannot write to {write_failure(exc, plan.describe())}")
        return EXIT_UNUSABLE
    try:
        parser = OvisParser(**parser_options(args))
        parser.check()
    except (OvisLoaderError, ImportError, ValueError) as exc:
        say(str(exc))
        return EXIT_UNUSABLE
    progress = Progress(progress_mode(args), limit=lambda: parser.concurrency_now)
    run = ParseRun(plan, progress, failed_files=len(problems))
    jobs = [DocumentJob(str(f), args.password, args.pages) for f in files]
    try:
        for doc in parser.parse_many(jobs, on_event=run.on_event):
            run.finished(doc)
    except KeyboardInterrupt:
        return run.interrupted(parser.settings.cache_dir)
    except OvisLoaderError as exc:
        run.progress.close()
        say(str(exc))
        return EXIT_UNUSABLE
    return run.summary(len(files) + len(problems))


def parser_options(args: argparse.Namespace) -> dict[str, Any]:
    """The :class:`OvisParser` keyword arguments the command line sets (both engines)."""
    return options_from_args(args, args.command)


def check_inputs(paths: list[str], *, follow_links: bool = False
                 ) -> tuple[list[Path], list[str]]:
    """The files to parse, and one message for each input that cannot be read."""
    files: list[Path] = []
    problems: list[str] = []
    for path in expand_paths(paths, follow_links=follow_links):
        if not path.exists():
            problems.append(f"{path}: file not found")
        elif not path.is_file():
            problems.append(f"{path}: not a file")
        elif not os.access(path, os.R_OK):
            problems.append(f"{path}: permission denied")
        elif path not in files:
            files.append(path)
    return files, problems


def say(message: str) -> None:
    """One line on stderr; a file name that is not UTF-8 shows its bytes as ``\\xff``."""
    print(f"ovisocr: {shown_name(message)}", file=sys.stderr, flush=True)


def progress_mode(args: argparse.Namespace) -> str:
    """``off`` with --no-progress, a bar on a terminal, plain lines otherwise."""
    if args.no_progress:
        return "off"
    return "bar" if sys.stderr.isatty() else "lines"


@dataclass
class ParseRun:
    """What one run has done so far: written files, failures, unfinished documents."""

    plan: OutputPlan
    progress: Progress
    failed_files: int = 0
    page_errors: int = 0
    pages: int = 0
    cached: int = 0
    documents: int = 0
    #: documents parsed but not written: (source, why)
    unwritten: list[tuple[str, str]] = field(default_factory=list)
    partial: dict[str, dict[int, PageResult]] = field(default_factory=dict)
    expected: dict[str, int] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)

    def on_event(self, event: ProgressEvent) -> None:
        self.progress.update(event)
        if isinstance(event, DocumentStarted):
            self.expected[event.source] = event.pages
            self.partial[event.source] = {}
        elif isinstance(event, PageFinished) and event.source in self.partial:
            self.partial[event.source][event.page.page_number] = event.page

    def finished(self, doc: ParsedDocument) -> None:
        self.partial.pop(doc.source, None)
        if doc.error is not None:   # the parser's warning has named it, once
            self.failed_files += 1
            return
        if not self.write(doc):
            return
        self.documents += 1
        self.pages += len(doc.pages)
        self.cached += sum(p.cached for p in doc.pages)
        self.page_errors += len(doc.failed_pages)

    def write(self, doc: ParsedDocument, note: str = "") -> bool:
        """Write one document; a write that fails is that document's error, said at once
        and again in the summary, and the run goes on with the others."""
        try:
            self.plan.write(doc, note)
        except OSError as exc:
            why = f"cannot write {write_failure(exc, self.plan.describe())}"
            say(f"{shown_name(doc.source)}: {why}")
            self.unwritten.append((doc.source, why))
            self.failed_files += 1
            if self.plan.stdout:
                silence_stdout()
            return False
        return True

    def summary(self, inputs: int) -> int:
        self.progress.close()
        for source, why in self.unwritten:
            say(f"not written: {shown_name(source)} ({why})")
        elapsed = time.monotonic() - self.started
        rate = self.pages / elapsed * 60 if elapsed > 0 else 0.0
        say(f"{inputs - self.failed_files}/{inputs} files, {self.pages} pages "
            f"({self.cached} from cache) in {elapsed:.1f} s ({rate:.0f} pages/min); "
            f"{self.page_errors} page errors, {self.failed_files} files failed; "
            f"output in {self.plan.describe()}")
        return EXIT_FAILED if self.failed_files or self.page_errors else EXIT_OK

    def interrupted(self, cache: str | None) -> int:
        """Ctrl-C: keep what is done, say how to resume."""
        self.progress.close()
        incomplete = 0
        for source, pages in self.partial.items():
            if pages:
                doc = ParsedDocument(source=source, total_pages=self.expected.get(source, 0),
                                     pages=[pages[n] for n in sorted(pages)])
                incomplete += self.write(doc, note=f"incomplete: interrupted after {len(pages)} "
                                                   f"of {self.expected.get(source, 0)} pages")
        done = self.pages + sum(len(p) for p in self.partial.values())
        resume = (f"run the same command again to resume: finished pages are in the cache "
                  f"{cache}" if cache else "leave out --no-cache next time, and an interrupted "
                  "run resumes where it stopped")
        say(f"interrupted: {_count(done, 'page')} done; {_count(self.documents, 'document')} "
            f"written, {incomplete} incomplete (marked as such); {resume}")
        return EXIT_INTERRUPTED


def silence_stdout() -> None:
    """After stdout failed (a closed pipe, ``/dev/full``): point it at /dev/null, so
    neither later documents nor the interpreter's last flush raise again."""
    with contextlib.suppress(OSError, ValueError):   # no file descriptor: nothing to do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
