"""What a caller hands a parser (a :class:`DocumentJob`) and what a run reports while
it goes (progress events); the public vocabulary of a run, shared by the CLI, the
adapters and Ray."""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .document import PageResult
from .sources import Source

#: True where every failure is read back from the results and reported from there (a
#: Ray worker: its rows carry the errors and the driver names them), so the warning
#: that names a failed file or page as it happens is not logged (it would say it twice)
FAILURES_REPORTED_FROM_RESULTS: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "ovisocr_failures_reported_from_results", default=False)


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
