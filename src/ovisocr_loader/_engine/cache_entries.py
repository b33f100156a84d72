"""What a cache entry holds, and how cache faults are said: shared by both layouts."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from ..document import PageResult

log = logging.getLogger("ovisocr_loader")

#: Puts between two checks of the cache's size (and evictions past its bound).
EVICT_EVERY = 256
#: Evicting frees this share of the bound, so the next check is not right away.
EVICT_TO = 0.8
#: A hit marks its entry used only when the mark is older than this (seconds): reruns
#: do not rewrite every entry they read.
TOUCH_AFTER_S = 3600.0


def encode(page: PageResult) -> str:
    """What is stored: the page with its elements (parsed once, when the page was read),
    without figure crops, which belong to a run's own ``figures`` setting."""
    return page.model_dump_json(exclude={"cached": True,
                                         "elements": {"__all__": {"image_png", "image_path"}}})


def decode(payload: str, fault: Callable[[str, Exception], None]) -> PageResult | None:
    """A stored page, or None when the entry is unreadable or was written without its
    elements (by an earlier version of this package): such a page is read again."""
    try:
        page = PageResult.model_validate_json(payload)
    except (ValidationError, ValueError, TypeError) as exc:
        fault("entry", exc)
        return None
    if "elements" not in page.model_fields_set and page.markdown:
        return None
    page.cached = True
    return page


def say_fault(said: set[str], kind: str, where: Path, exc: Exception) -> None:
    """Say each kind of cache fault once; later ones only at debug level."""
    messages = {"read": "cannot read from the cache %s (%s); pages not found are parsed",
                "entry": "ignoring unreadable entries of the cache %s (%s); those pages "
                         "are parsed again",
                "write": "cannot write to the cache %s (%s); this run goes on without "
                         "storing pages"}
    level = logging.DEBUG if kind in said else logging.WARNING
    said.add(kind)
    log.log(level, messages[kind], where, f"{type(exc).__name__}: {exc}")
