"""Where ``ovisocr parse`` writes, and what: never two inputs into one file.

- ``-o DIR``: the input folders are mirrored under DIR (``a/x.pdf`` and
  ``b/x.pdf`` become ``DIR/a/x.md`` and ``DIR/b/x.md``), one file per format;
- ``-o result.md`` (one input): that file;
- ``-o -``: stdout, Markdown documents one after another, or JSON lines.

Every Markdown file starts with a comment naming its source, and marks each
page with ``<!-- page N -->`` (plus ``: blank``, ``: loop_trimmed``, ``: truncated`` or
the error).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..document import ParsedDocument
from ..paths import user_path
from ..writes import check_writable_file, check_writable_folder, comment_safe, write_atomically

FILE_SUFFIXES = {".md": "md", ".json": "json"}


class OutputError(ValueError):
    """``-o`` cannot serve these inputs (a usage error)."""


@dataclass(frozen=True)
class OutputPlan:
    """Where each input's results go; ``stdout`` when ``-o -``.

    ``names`` maps each input (as given) to its output path under ``directory``,
    without the format's suffix: decided once for all inputs, so no two share one.
    """

    formats: tuple[str, ...]
    stdout: bool = False
    single_file: Path | None = None
    directory: Path | None = None
    names: dict[str, Path] = field(default_factory=dict)

    def targets(self, source: str) -> list[tuple[Path, str]]:
        """(file, format) pairs for one input; empty for stdout."""
        if self.stdout:
            return []
        if self.single_file is not None:
            return [(self.single_file, self.formats[0])]
        assert self.directory is not None
        stem = self.directory / self.names[source]
        return [(stem.with_name(f"{stem.name}.{fmt}"), fmt) for fmt in self.formats]

    def check(self) -> None:
        """Raise ``OSError`` naming the first target that cannot be written, before any
        page is sent (folders are made as a side effect)."""
        files = [self.single_file] if self.single_file is not None else [
            path for source in self.names for path, _ in self.targets(source)]
        for folder in sorted({path.parent for path in files}):
            check_writable_folder(folder)
        for path in files:
            check_writable_file(path)

    def write(self, doc: ParsedDocument, note: str = "") -> list[Path]:
        """Write one document everywhere it goes, each file whole or not at all; returns
        the files written, raises ``OSError`` for the first that could not be."""
        if self.stdout:
            fmt = self.formats[0]
            text = document_json(doc) + "\n" if fmt == "json" else render_markdown(doc, note)
            sys.stdout.write(text)
            sys.stdout.flush()
            return []
        written = []
        for path, fmt in self.targets(doc.source):
            path.parent.mkdir(parents=True, exist_ok=True)
            text = document_json(doc, indent=2) if fmt == "json" else render_markdown(doc, note)
            write_atomically(path, text)
            written.append(path)
        return written

    def describe(self) -> str:
        if self.stdout:
            return "stdout"
        return str(self.single_file or self.directory)


def plan_outputs(output: str, formats: list[str] | None, inputs: list[Path]) -> OutputPlan:
    """Decide where results go; raise :class:`OutputError` for a plan that cannot work."""
    chosen = tuple(dict.fromkeys(formats or ["md"]))
    if output == "-":
        if len(chosen) > 1:
            raise OutputError("-o - writes one format; pick one --format")
        return OutputPlan(chosen, stdout=True)
    target = Path(user_path(output))
    suffix = FILE_SUFFIXES.get(target.suffix.lower())
    if suffix is not None and not target.is_dir():
        if len(inputs) != 1:
            raise OutputError(f"-o {output} is a single file, but there are {len(inputs)} "
                              "inputs; give a directory")
        if formats and (len(chosen) > 1 or chosen[0] != suffix):
            raise OutputError(f"-o {output} is a .{suffix} file; --format {chosen[0]} disagrees")
        return OutputPlan((suffix,), single_file=target)
    return OutputPlan(chosen, directory=target, names=output_names(inputs))


def output_names(inputs: list[Path]) -> dict[str, Path]:
    """Each input's output path without a suffix, mirroring the path given under the
    inputs' common folder (a link is named as the link, never as its target).

    Two inputs that would share a name (``a.pdf`` and ``a.png``; names that differ
    only in case) stay apart: the later keeps its own suffix (``a.png.md``), and a
    number is added should that be taken too (``a.png-2.md``).
    """
    base = _common_parent(inputs)
    names: dict[str, Path] = {}
    taken: set[str] = set()
    for path in inputs:
        relative = _relative(path, base)
        choices = [relative.with_suffix(""), relative]
        choices += [relative.with_name(f"{relative.name}-{n}") for n in range(2, len(inputs) + 2)]
        name = next(c for c in choices if _key(c) not in taken)
        taken.add(_key(name))
        names[str(path)] = name
    return names


def _key(name: Path) -> str:
    return str(name).casefold()


def _common_parent(inputs: list[Path]) -> Path:
    parents = [os.path.dirname(os.path.abspath(p)) for p in inputs]
    return Path(os.path.commonpath(parents)) if parents else Path.cwd()


def _relative(path: Path, base: Path) -> Path:
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(base)
    except ValueError:
        return Path(*absolute.parts[1:])


def document_json(doc: ParsedDocument, indent: int | None = None) -> str:
    """A document as JSON text. A name that is not UTF-8 is kept exactly, as JSON's
    ``\\udcff`` escapes (read back with ``json.loads``, then validated)."""
    text = json.dumps(doc.model_dump(mode="json"), indent=indent, ensure_ascii=False,
                      separators=None if indent else (",", ":"))
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def render_markdown(doc: ParsedDocument, note: str = "") -> str:
    """A document as Markdown, headed by its source and page count. Names and error
    texts go into HTML comments made safe (:func:`~ovisocr_loader.writes.comment_safe`)."""
    header = f"<!-- source: {comment_safe(doc.source)}; {len(doc.pages)} of {doc.total_pages} pages"
    if note:
        header += f"; {note}"
    parts = [header + " -->"]
    if doc.error is not None:
        parts.append(f"<!-- error: {comment_safe(doc.error.text)} -->")
    for page in doc.pages:
        mark = f"<!-- page {page.page_number}"
        if page.error is not None:
            mark += f": {comment_safe(page.error.text)}"
        elif page.flags:
            mark += f": {page.flags[0]}"
        parts.append(mark + " -->\n\n" + page.markdown if page.markdown else mark + " -->")
    return "\n\n".join(parts) + "\n"
