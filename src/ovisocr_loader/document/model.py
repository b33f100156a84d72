"""The shared document model: what a parse returns, for every consumer.

Both integrations, the CLI and the cache read these objects, so they are
pydantic models with a schema name and a semver version (as docling-core does)
and round-trip through JSON.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..elements.model import Element

SCHEMA_NAME = "ovisocr_loader.ParsedDocument"
SCHEMA_VERSION = "1.3.0"  # 1.1: Attempt.endpoint, PageResult.cached; 1.2: Element.src;
#                          1.3: PageResult.rotation

FinishReason = Literal["stop", "length", "aborted", "repetition", "error"]
AttemptPurpose = Literal["first", "loop_retry", "long_retry"]


class Attempt(BaseModel):
    """One HTTP request made for a page.

    ``completion_tokens`` comes from the server's usage chunk, so it is None for
    a stream the guard closed early; ``chars`` counts what was received either way.
    """

    model_config = ConfigDict(extra="forbid")

    purpose: AttemptPurpose
    params: dict[str, Any]
    finish_reason: FinishReason | str | None = None
    completion_tokens: int | None = None
    prompt_tokens: int | None = None
    chars: int = 0
    latency_s: float = 0.0
    first_token_s: float | None = None
    aborted: bool = False
    degenerate: str | None = None
    error: str | None = None
    endpoint: str | None = None


class PageErrorInfo(BaseModel):
    """Why a page has no content. ``kind`` names a class in :mod:`ovisocr_loader.errors`."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    message: str
    attempts: int = 0

    @classmethod
    def from_exception(cls, exc: BaseException, attempts: int = 0) -> PageErrorInfo:
        """The record of ``exc``: its class name, and its reason (the message without
        the file and page the record already sits under)."""
        return cls(kind=type(exc).__name__, message=getattr(exc, "reason", None) or str(exc),
                   attempts=attempts)

    @property
    def text(self) -> str:
        """``"PageTimeout: no token in 120 s"``: how logs, metadata and outputs show it."""
        return f"{self.kind}: {self.message}"


#: What can be wrong with (or notable about) a page, most serious first.
PageFlag = Literal["error", "loop_trimmed", "truncated", "blank"]
PAGE_FLAGS: tuple[PageFlag, ...] = ("error", "loop_trimmed", "truncated", "blank")


class PageResult(BaseModel):
    """One page: its Markdown, how it was produced, and what went wrong if anything."""

    model_config = ConfigDict(extra="forbid")

    page_number: int = Field(ge=1, description="1-based page number in the source")
    markdown: str = ""
    width: int = 0
    height: int = 0
    dpi: float | None = None
    page_size_pt: tuple[float, float] | None = None
    rotation: int = Field(default=0, description="clockwise degrees the page image was "
                          "turned before it was sent (orientation='auto'); 0 when not")
    blank: bool = False
    loop_trimmed: bool = False
    truncated: bool = False
    cached: bool = False
    error: PageErrorInfo | None = None
    attempts: list[Attempt] = Field(default_factory=list)
    elements: list[Element] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def flags(self) -> list[PageFlag]:
        """The page's flags in :data:`PAGE_FLAGS` order (most serious first); empty
        for a clean page. CLI outputs, the review site, metadata and Ray rows read this."""
        on = {"error": self.error is not None, "loop_trimmed": self.loop_trimmed,
              "truncated": self.truncated, "blank": self.blank}
        return [flag for flag in PAGE_FLAGS if on[flag]]


class ParsedDocument(BaseModel):
    """A parsed input: every selected page, in page order, as content or as an error."""

    model_config = ConfigDict(extra="forbid")

    schema_name: Literal["ovisocr_loader.ParsedDocument"] = "ovisocr_loader.ParsedDocument"
    version: str = SCHEMA_VERSION
    source: str
    sha256: str | None = None
    total_pages: int = 0
    model: str | None = None
    pages: list[PageResult] = Field(default_factory=list)
    error: PageErrorInfo | None = None

    @property
    def markdown(self) -> str:
        """All pages joined with a blank line (page errors contribute nothing)."""
        return "\n\n".join(p.markdown for p in self.pages if p.markdown)

    @property
    def failed_pages(self) -> list[PageResult]:
        return [p for p in self.pages if p.error is not None]

    @property
    def flags(self) -> list[PageFlag]:
        """Every flag any page has (``error`` also for a file that failed as a whole);
        ``blank`` only when every page is blank."""
        on: set[PageFlag] = {flag for page in self.pages for flag in page.flags
                             if flag != "blank"}
        if self.error is not None:
            on.add("error")
        if self.pages and all(page.blank for page in self.pages):
            on.add("blank")
        return [flag for flag in PAGE_FLAGS if flag in on]

    @property
    def error_text(self) -> str | None:
        """The file's error and every page's, each page's with its number; None when clean."""
        errors = [f"page {p.page_number}: {p.error.text}" for p in self.pages if p.error]
        if self.error is not None:
            errors.insert(0, self.error.text)
        return "; ".join(errors) or None


def renumbered(page: PageResult, number: int) -> PageResult:
    """``page`` as page ``number``: a page read before (the same image) may now sit
    elsewhere in its file, or in another file."""
    if page.page_number == number:
        return page
    elements = [e.model_copy(update={"page_number": number}) for e in page.elements]
    return page.model_copy(update={"page_number": number, "elements": elements})
