"""Progress of ``ovisocr parse``: a bar on a terminal, plain lines elsewhere
(logs, CI, nohup): one every 10% of the pages and at least every 10 seconds.

One rate everywhere, pages per minute over the run so far; the current
concurrency limit is shown when the parser reports it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from tqdm import tqdm

from ..jobs import DocumentStarted, PageFinished, ProgressEvent

PLAIN_EVERY_S = 10.0


class Progress:
    """Counts pages as they finish and shows it: tqdm on a TTY, a line every 10 s otherwise."""

    def __init__(self, mode: str, stream: TextIO | None = None,
                 limit: Callable[[], int | None] | None = None) -> None:
        self.stream = stream or sys.stderr
        self.mode = mode   # "bar", "lines" or "off"
        self.limit = limit or (lambda: None)
        self.started = time.monotonic()
        self.total = self.done = self.failed = self.cached = 0
        self._last_line = self.started
        self._bar = tqdm(total=0, unit="page", file=self.stream, dynamic_ncols=True,
                         disable=mode != "bar",
                         bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} pages [{elapsed}{postfix}]")

    def update(self, event: ProgressEvent) -> None:
        if isinstance(event, DocumentStarted):
            self.total += event.pages
            self._bar.total = self.total
            self._bar.refresh()
            return
        if not isinstance(event, PageFinished):
            return
        self.done += 1
        self.failed += event.page.error is not None
        self.cached += event.page.cached
        self._bar.set_postfix_str(self.status(), refresh=False)
        self._bar.update(1)
        now = time.monotonic()
        step = max(1, self.total // 10)   # a line every 10% of the pages, or every 10 s
        if self.mode == "lines" and (now - self._last_line >= PLAIN_EVERY_S
                                     or self.done % step == 0 or self.done == self.total):
            self._last_line = now
            print(f"ovisocr: {self.done}/{self.total} pages, {self.status()}",
                  file=self.stream, flush=True)

    def rate(self) -> float:
        """Pages per minute since the start."""
        minutes = (time.monotonic() - self.started) / 60
        return self.done / minutes if minutes > 0 else 0.0

    def status(self) -> str:
        parts = [f"{self.rate():.0f} pages/min"]
        limit = self.limit()
        if limit is not None:
            parts.append(f"concurrency {limit}")
        if self.failed:
            parts.append(f"{self.failed} failed")
        return ", ".join(parts)

    def close(self) -> None:
        self._bar.close()
