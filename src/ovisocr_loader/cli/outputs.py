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

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ..document import ParsedDocument
from ..paths import user_path

FILE_SUFFIXES = {".md": "md", ".json": "json"}


class OutputError(ValueError):
    """``-o`` cannot serve these inputs (a usage error)."""


@dataclass(frozen=True)
class OutputPlan:
    """Where each input's results go; ``stdout`` when ``-o -``."""

    formats: tuple[str, ...]
    stdout: bool = False
    single_file: Path | None = None
    directory: Path | None = None
    base: Path | None = None

    def targets(self, source: str) -> list[tuple[Path, str]]:
        """(file, format) pairs for one input; empty for stdout."""
        if self.stdout:
            return []
        if self.single_file is not None:
            return [(self.single_file, self.formats[0])]
        assert self.directory is not None and self.base is not None
        relative = _relative(Path(source), self.base)
        return [(self.directory / relative.with_suffix(f".{fmt}"), fmt) for fmt in self.formats]

    def write(self, doc: ParsedDocument, note: str = "") -> list[Path]:
        """Write one document everywhere it goes; returns the files written."""
        if self.stdout:
            fmt = self.formats[0]
            text = doc.model_dump_json() + "\n" if fmt == "json" else render_markdown(doc, note)
            sys.stdout.write(text)
            sys.stdout.flush()
            return []
        written = []
        for path, fmt in self.targets(doc.source):
            path.parent.mkdir(parents=True, exist_ok=True)
            text = doc.model_dump_json(indent=2) if fmt == "json" else render_markdown(doc, note)
            path.write_text(text, encoding="utf-8")
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
    return OutputPlan(chosen, directory=target, base=_common_parent(inputs))


def _common_parent(inputs: list[Path]) -> Path:
    parents = [str(p.resolve().parent) for p in inputs]
    return Path(os.path.commonpath(parents)) if parents else Path.cwd()


def _relative(path: Path, base: Path) -> Path:
    resolved = path.resolve()
    try:
        return resolved.relative_to(base)
    except ValueError:
        return Path(*resolved.parts[1:])


def render_markdown(doc: ParsedDocument, note: str = "") -> str:
    """A document as Markdown, headed by its source and page count."""
    header = f"<!-- source: {doc.source}; {len(doc.pages)} of {doc.total_pages} pages"
    if note:
        header += f"; {note}"
    parts = [header + " -->"]
    if doc.error is not None:
        parts.append(f"<!-- error: {doc.error.text} -->")
    for page in doc.pages:
        mark = f"<!-- page {page.page_number}"
        if page.error is not None:
            mark += f": {page.error.text}"
        elif page.flags:
            mark += f": {page.flags[0]}"
        parts.append(mark + " -->\n\n" + page.markdown if page.markdown else mark + " -->")
    return "\n\n".join(parts) + "\n"
