"""What a caller hands a parser (a :class:`DocumentJob`) and what a run reports while
it goes (progress events); the public vocabulary of a run, shared by the CLI, the
adapters and Ray."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .document import PageResult
from .sources import Source


@dataclass(frozen=True)
class DocumentJob:
    """One input to parse, with its own password and page selection."""

    source: Source
    password: str | None = None
    pages: Sequence[int] | None = None
    name: str | None = None


@dataclass(frozen=True)
class DocumentStarted:
    source: str
    pages: int


@dataclass(frozen=True)
class PageFinished:
    source: str
    page: PageResult


ProgressEvent = DocumentStarted | PageFinished
ProgressCallback = Callable[[ProgressEvent], None]
