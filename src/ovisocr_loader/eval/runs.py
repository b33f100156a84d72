"""Reading what ``ovisocr parse`` wrote, and reference transcriptions, by document.

A run is a folder (searched recursively) or files of ``.json`` (a ``ParsedDocument``)
or ``.md`` (pages marked ``<!-- page N -->``, with ``: blank``, ``: loop_trimmed``,
``: truncated`` or the error after the number). A document is named by its path
relative to the folder, without suffix (``scans/a``); when both formats are there the
JSON is read. References are plain text or Markdown files (``.txt``, ``.md``) matched
by that name or, failing that, by file stem; form feeds (``\\f``, as ``pdftotext``
writes between pages) split a reference into page references.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from ..document import PAGE_FLAGS, ParsedDocument

PageStatus = Literal["ok", "failed", "loop_trimmed", "truncated", "blank"]

OUTPUT_SUFFIXES = (".json", ".md")
REFERENCE_SUFFIXES = (".txt", ".md", ".markdown")
_PAGE_MARK = re.compile(r"^<!-- page (\d+)(?:: ([^\n]*?))? -->[ \t]*$", re.MULTILINE)
_HEADER = re.compile(r"\A<!-- source: [^\n]*-->\n*")
_DOCUMENT_ERROR = re.compile(r"\A<!-- error: [^\n]*-->\n*")


class EvalInputError(ValueError):
    """An input of an evaluation cannot be read (the message names it)."""


@dataclass(frozen=True)
class RunPage:
    page_number: int
    text: str
    status: PageStatus = "ok"


@dataclass
class RunDocument:
    """One document of a run: its pages' text and how each page ended."""

    name: str
    path: Path
    pages: list[RunPage] = field(default_factory=list)
    error: str | None = None

    @property
    def text(self) -> str:
        return "\n\n".join(page.text for page in self.pages)


@dataclass(frozen=True)
class Reference:
    name: str
    text: str
    #: page texts when the file holds form feeds, else None
    pages: list[str] | None = None


@dataclass
class Run:
    """Documents by name, and one message per file that could not be read."""

    documents: dict[str, RunDocument] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def load_run(paths: Iterable[str | Path]) -> Run:
    """Every output document under ``paths`` (files or folders)."""
    run = Run()
    for root, path in _files(paths, OUTPUT_SUFFIXES):
        name = _name(root, path)
        known = run.documents.get(name)
        if known is not None and known.path.suffix == ".json":
            continue   # both formats written: the JSON carries the page flags
        try:
            run.documents[name] = read_output(path, name)
        except EvalInputError as exc:
            run.problems.append(str(exc))
    return run


def read_output(path: Path, name: str | None = None) -> RunDocument:
    """One file of ``ovisocr parse`` output."""
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalInputError(f"{path}: cannot read ({exc})") from None
    name = name or path.stem
    if path.suffix.lower() == ".json":
        try:
            doc = ParsedDocument.model_validate(json.loads(raw))
        except (ValueError, ValidationError) as exc:
            raise EvalInputError(f"{path}: not a ParsedDocument JSON file "
                                 f"({str(exc).splitlines()[0]})") from None
        return from_document(doc, name, path)
    return _from_markdown(raw, name, path)


def from_document(doc: ParsedDocument, name: str, path: Path) -> RunDocument:
    """A parsed document (from JSON, or straight from a parser) as a run document."""
    pages = [RunPage(p.page_number, p.markdown if p.error is None else "",
                     _status(p.flags[0] if p.flags else None)) for p in doc.pages]
    error = doc.error.text if doc.error is not None else None
    return RunDocument(name, path, pages, error)


def _from_markdown(raw: str, name: str, path: Path) -> RunDocument:
    marks = list(_PAGE_MARK.finditer(raw))
    if not marks:
        text = _HEADER.sub("", raw)
        error = _DOCUMENT_ERROR.match(text)
        if error is not None:
            return RunDocument(name, path, [], error.group().strip()[len("<!-- error: "):-4])
        return RunDocument(name, path, [RunPage(1, text.strip())])
    pages = []
    for index, mark in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(raw)
        flag = (mark.group(2) or "").strip()
        failed = bool(flag) and flag not in PAGE_FLAGS
        pages.append(RunPage(int(mark.group(1)), "" if failed else raw[mark.end():end].strip(),
                             _status("error" if failed else flag or None)))
    return RunDocument(name, path, pages)


def _status(flag: str | None) -> PageStatus:
    """A page's status from its most serious flag (a Markdown page mark names it)."""
    statuses: dict[str | None, PageStatus] = {
        None: "ok", "error": "failed", "loop_trimmed": "loop_trimmed",
        "truncated": "truncated", "blank": "blank"}
    return statuses[flag]


def load_references(paths: Iterable[str | Path]) -> tuple[dict[str, Reference], list[str]]:
    """References by name (files or folders), and a message per unreadable file."""
    references: dict[str, Reference] = {}
    problems: list[str] = []
    for root, path in _files(paths, REFERENCE_SUFFIXES):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{path}: cannot read ({exc})")
            continue
        name = _name(root, path)
        pages = text.rstrip("\f\n").split("\f") if "\f" in text else None
        references[name] = Reference(name, text.replace("\f", "\n"), pages)
    return references, problems


def match_reference(name: str, references: dict[str, Reference]) -> Reference | None:
    """The reference of a document: same relative name, else the only one of its stem."""
    if name in references:
        return references[name]
    stem = name.rsplit("/", 1)[-1]
    same_stem = [r for key, r in references.items() if key.rsplit("/", 1)[-1] == stem]
    return same_stem[0] if len(same_stem) == 1 else None


def _files(paths: Iterable[str | Path], suffixes: tuple[str, ...]
           ) -> Iterable[tuple[Path, Path]]:
    """(root, file) for every file with one of ``suffixes``; a missing path raises."""
    for given in paths:
        path = Path(given).expanduser()
        if path.is_dir():
            for found in sorted(path.rglob("*")):
                if found.is_file() and found.suffix.lower() in suffixes:
                    yield path, found
        elif path.is_file():
            yield path.parent, path
        else:
            raise EvalInputError(f"{path}: no such file or folder")


def _name(root: Path, path: Path) -> str:
    return path.relative_to(root).with_suffix("").as_posix()
