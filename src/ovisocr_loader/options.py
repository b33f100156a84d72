"""Every option of a parse, declared once: name, type, default, bounds, help text, and
which commands of the command line expose it.

:class:`ParseOptions` is the declaration. ``OvisParser`` takes each option as a keyword
argument (its defaults read from here), ``OvisReader`` inherits the fields,
``OvisLoader``, ``OvisBlobParser`` and Ray's ``read_scans`` hand theirs to
``OvisParser``, and the ``ovisocr`` flags are generated from the :class:`Flag` an
option carries (:mod:`ovisocr_loader.cli.option_flags`). ``tests/unit/test_options.py``
fails when an entry point misses an option or exposes it with another default or
other bounds.

:meth:`ParseOptions.settings` is the one path from what a caller said to what the
session and the transport use (:class:`ParserSettings`), and :func:`concurrency_share`
the one place where ``"auto"`` concurrency and each worker's share are worked out.
"""

from __future__ import annotations

import dataclasses
import os
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.fields import FieldInfo

from .client.adaptive import AdaptivePolicy
from .client.request import PROMPT, resolve_prompt
from .config import DPI_RANGE, GuardPolicy, HealthPolicy, RenderSettings, RetryPolicy, Timeouts
from .paths import user_path
from .sources.orientation import require_classifier
from .sources.render_workers import default_render_workers

DEFAULT_BASE_URL = "http://localhost:8000/v1"
#: The environment variable that moves the default cache, and the cache's folder name.
CACHE_ENV, CACHE_APP = "OVISOCR_CACHE_DIR", "ovisocr-loader"
#: Where an adaptive limit starts, per server, over every worker sharing it.
AUTO_START = 16
#: The commands that read pages (``eval`` has a ``--dpi`` list of its own).
READING = ("parse", "review", "eval")

ErrorMode = Literal["record", "raise"]
FigureMode = Literal["keep", "crop"]
CacheLayout = Literal["sqlite", "files"]
Orientation = Literal["off", "auto"]
Auto = Literal["auto"]


#: A flag's default when it is the option's own.
SAME = "<the option's default>"


@dataclass(frozen=True)
class Flag:
    """How the command line exposes an option: ``--option-name`` (or ``name``) in
    ``commands``, given several times when ``repeat``; ``default`` when the command
    line's differs from Python's (the option's help says why)."""

    metavar: str | None = None
    commands: tuple[str, ...] = READING
    name: str | None = None
    repeat: bool = False
    default: Any = SAME


class ParseOptions(BaseModel):
    """What a caller may say about a parse. Every entry point exposes every field."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    base_url: Annotated[str | Sequence[str] | None, Flag(
        "URL", (*READING, "bench"), repeat=True)] = Field(
        default=None, description="vLLM endpoint(s) ending in /v1, e.g. http://gpu-box:8000/v1; "
        "several spread the pages over servers (default: $OVISOCR_BASE_URL, comma-separated "
        f"for several, else {DEFAULT_BASE_URL})")
    api_key: Annotated[str | None, Flag("KEY")] = Field(
        default=None, exclude=True, repr=False,
        description="sent as a bearer token (default: $OVISOCR_API_KEY); never serialised")
    model: Annotated[str | None, Flag("NAME", (*READING, "bench"))] = Field(
        default=None, description="served model name, checked against /v1/models (default: "
        "$OVISOCR_MODEL, else the first model the server lists)")
    prompt: Annotated[str | None, Flag("NAME|TEXT")] = Field(
        default=None, description="the page prompt: a name (ovisocr2, glm-ocr, docling) or "
        "the text to send, for another document VLM (default: ovisocr2, the model card's)")
    dpi: Annotated[float, Flag("DPI", ("parse", "review", "bench"))] = Field(
        default=RenderSettings.dpi, ge=DPI_RANGE[0], le=DPI_RANGE[1],
        description="render resolution in dots per inch (below 150 tables fuse)")
    concurrency: Annotated[Annotated[int, Field(ge=1, le=4096)] | Auto, Flag("N|auto")] = Field(
        default="auto", description="requests in flight over every page of every input: a number, "
        "or auto to find and track the server's throughput elbow")
    max_concurrency: Annotated[int, Flag("N")] = Field(
        default=AdaptivePolicy.maximum, ge=1, le=4096,
        description="upper bound of concurrency auto, per server")
    orientation: Annotated[Orientation, Flag()] = Field(
        default="off", description="auto: turn sideways or upside-down pages upright before "
        "sending (the orientation extra)")
    render_workers: Annotated[Annotated[int, Field(ge=0, le=64)] | Auto, Flag(
        "N|auto", default="auto")] = Field(
        default=0, description="processes rendering PDF pages, each with its own PDFium; auto: the "
        "cores beyond two; 0: threads (the Python default: spawned processes import the "
        "calling script again, which needs an if __name__ == '__main__' guard; the command "
        "line uses auto)")
    cache_dir: Annotated[str | Literal[False] | None, Flag("DIR", name="--cache")] = Field(
        default=None, description="keep finished pages here: reruns and interrupted runs skip "
        "them; False (--no-cache) keeps none (default: $OVISOCR_CACHE_DIR, else the user "
        "cache folder, e.g. ~/.cache/ovisocr-loader)")
    cache_max_mb: Annotated[int, Flag("MB")] = Field(
        default=2048, ge=1, description="bound of the cache's size: past it the pages used "
        "longest ago are dropped")
    cache_layout: CacheLayout = Field(
        default="sqlite", description="sqlite: one file; files: one JSON file per page, for a "
        "folder shared by several machines")
    first_token_timeout: Annotated[float, Flag("SECONDS")] = Field(
        default=Timeouts.first_token, gt=0, description="give up a request with no token "
        "after this many seconds (connecting, queueing, prefill)")
    page_timeout: Annotated[float, Flag("SECONDS")] = Field(
        default=Timeouts.page, gt=0, description="give up a request after this many seconds")
    connect_timeout: float = Field(default=Timeouts.connect, gt=0,
                                   description="TCP connect bound, in seconds")
    server_wait: Annotated[float | None, Flag("SECONDS")] = Field(
        default=None, ge=0, description="when the server stops answering mid-run (a restart), wait "
        "this many seconds before recording the remaining pages as errors (default: the "
        "health policy's wait_for_any, 600)")
    errors: ErrorMode = Field(
        default="record", description="record: a failed page is a PageResult with error set; "
        "raise: the first failure raises PageError")
    figures: FigureMode = Field(
        default="keep", description="crop: attach a PNG crop of every figure (and write it to "
        "figures_dir)")
    figures_dir: str | None = Field(default=None, description="where figure crops are written")
    prefetch: int | None = Field(
        default=None, ge=0, description="pages rendered ahead of the requests (default: half the "
        "in-flight limit, at least 4)")
    retry: RetryPolicy | None = Field(default=None, description="transport retries (RetryPolicy)")
    guard: GuardPolicy | None = Field(default=None, description="the decoding guard (GuardPolicy)")
    health: HealthPolicy | None = Field(
        default=None, description="when endpoints are taken out and tried again (HealthPolicy)")

    @field_validator("cache_dir", "figures_dir", mode="before")
    @classmethod
    def _absolute(cls, value: Any) -> Any:
        """Crops and caches are found again later, maybe from another directory."""
        if isinstance(value, (str, os.PathLike)):
            return os.path.abspath(user_path(value))
        return value

    @field_validator("orientation")
    @classmethod
    def _classifier(cls, value: Orientation) -> Orientation:
        if value == "auto":
            require_classifier()   # the extra, named now rather than at the first page
        return value

    def settings(self, workers: int = 1) -> ParserSettings:
        """What a session runs with; ``workers`` processes share the limits."""
        concurrency, adaptive = concurrency_share(self.concurrency, self.max_concurrency,
                                                  workers)
        health = self.health or HealthPolicy()
        if self.server_wait is not None:
            health = dataclasses.replace(health, wait_for_any=self.server_wait)
        return ParserSettings(
            base_urls=resolve_base_urls(self.base_url),
            api_key=self.api_key or os.environ.get("OVISOCR_API_KEY"),
            model=self.model or os.environ.get("OVISOCR_MODEL"),
            render=RenderSettings(dpi=self.dpi, orientation=self.orientation),
            concurrency=concurrency, prefetch=self.prefetch,
            timeouts=Timeouts(first_token=self.first_token_timeout, page=self.page_timeout,
                              connect=self.connect_timeout),
            retry=self.retry or RetryPolicy(), guard=self.guard or GuardPolicy(),
            errors=self.errors, figures=self.figures, figures_dir=self.figures_dir,
            health=health, cache_dir=resolve_cache_dir(self.cache_dir),
            cache_default=self.cache_dir is None and not os.environ.get(CACHE_ENV),
            cache_layout=self.cache_layout, cache_max_bytes=self.cache_max_mb << 20,
            adaptive=adaptive, prompt=resolve_prompt(self.prompt),
            render_workers=default_render_workers() if self.render_workers == "auto"
            else self.render_workers)


#: Every option with its default: what ``OvisParser``'s signature reads.
DEFAULTS = ParseOptions()


def option_fields() -> dict[str, FieldInfo]:
    """Every option by name, with its declaration."""
    return dict(ParseOptions.model_fields)


def flag_of(info: FieldInfo) -> Flag | None:
    """The command line's spelling of an option, or None when it has no flag."""
    return next((m for m in info.metadata if isinstance(m, Flag)), None)


@dataclass(frozen=True)
class ParserSettings:
    """Everything a session needs; plain data, so parsers and readers pickle."""

    base_urls: tuple[str, ...]
    api_key: str | None = field(repr=False)   # a secret: never in reprs or logs
    model: str | None
    render: RenderSettings
    concurrency: int | Auto
    prefetch: int | None
    timeouts: Timeouts
    retry: RetryPolicy
    guard: GuardPolicy
    errors: ErrorMode
    figures: FigureMode = "keep"
    figures_dir: str | None = None
    health: HealthPolicy = field(default_factory=HealthPolicy)
    cache_dir: str | None = None
    cache_layout: CacheLayout = "sqlite"
    cache_max_bytes: int = 2048 << 20
    #: the cache is the user's default one (no folder named): no simulated page goes in
    cache_default: bool = False
    adaptive: AdaptivePolicy = field(default_factory=AdaptivePolicy)
    prompt: str = PROMPT
    #: processes rendering PDF pages on disk (0: threads only)
    render_workers: int = 0

    @property
    def auto(self) -> bool:
        return self.concurrency == "auto"


def concurrency_share(concurrency: int | Auto, max_concurrency: int, workers: int = 1
                      ) -> tuple[int | Auto, AdaptivePolicy]:
    """One worker's part of a limit that ``workers`` processes share: a fixed limit
    divided between them, or, with ``"auto"``, where each worker's adaptive limit per
    server starts (:data:`AUTO_START` over all) and its ceiling (``max_concurrency``
    over all). With several endpoints, a fixed limit is then divided between them."""
    maximum = max(1, max_concurrency // workers)
    adaptive = AdaptivePolicy(start=max(1, min(maximum, AUTO_START // workers)),
                              maximum=maximum)
    if concurrency == "auto":
        return "auto", adaptive
    return max(1, concurrency // workers), adaptive


def resolve_cache_dir(cache_dir: str | Literal[False] | None) -> str | None:
    """The cache folder: the one given, ``$OVISOCR_CACHE_DIR``, else the platform's user
    cache folder (as pip and Hugging Face keep theirs); None for ``False`` (no cache)."""
    if cache_dir is False:
        return None
    if cache_dir is None:
        cache_dir = os.environ.get(CACHE_ENV) or platformdirs.user_cache_dir(CACHE_APP)
    return os.path.abspath(user_path(cache_dir))


def resolve_base_urls(base_url: str | Sequence[str] | None) -> tuple[str, ...]:
    """One URL, several, or ``OVISOCR_BASE_URL`` (comma-separated for several)."""
    if base_url is None:
        base_url = os.environ.get("OVISOCR_BASE_URL") or DEFAULT_BASE_URL
    urls = [base_url] if isinstance(base_url, str) else list(base_url)
    urls = [u.strip() for item in urls for u in item.split(",") if u.strip()]
    if not urls:
        raise ValueError("base_url is empty")
    for url in urls:
        _check_url(url)
    return tuple(dict.fromkeys(urls))


def _check_url(url: str) -> None:
    """An http(s) URL with a host and no credentials in it, neither as ``user:key@`` nor
    in a query (they would end up in logs and error messages)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    shown = parts._replace(netloc=host, query="", fragment="").geturl() \
        if parts.password or parts.username or parts.query or parts.fragment else url
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"base_url must be an http(s) URL such as http://localhost:8000/v1, "
                         f"got {shown!r}")
    if parts.username or parts.password:
        raise ValueError(f"base_url {shown!r} holds credentials; pass api_key= (or set "
                         "OVISOCR_API_KEY) instead")
    if parts.query or parts.fragment:
        raise ValueError(f"base_url {shown!r} has a query (?...) or fragment (#...), which "
                         "the API paths cannot follow; pass a key as api_key= (or "
                         "OVISOCR_API_KEY) instead")
