"""The ``files`` cache layout: one JSON file per page, ``pages/<2 hex>/<64 hex>.json``,
written whole by rename: safe for many machines sharing a network folder (where
sqlite's locking is not), and one object per page when the folder is synced to or
mounted from S3-style storage. A file's modification time marks when it was last
used; past the bound, the files used longest ago are removed.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from ..document import PageResult
from ..writes import write_atomically
from .cache_entries import EVICT_EVERY, EVICT_TO, TOUCH_AFTER_S, decode, encode, say_fault

PAGES_FOLDER = "pages"
ALIASES_FOLDER = "aliases"


class PageFiles:
    """Readers on any machine see a page completely or not at all."""

    def __init__(self, directory: str | os.PathLike[str], max_bytes: int | None = None
                 ) -> None:
        """Use (or create) ``directory``; raises OSError when it cannot hold a cache."""
        self.path = Path(directory) / PAGES_FOLDER
        self.aliases = Path(directory) / ALIASES_FOLDER
        self.path.mkdir(parents=True, exist_ok=True)
        self.max_bytes = max_bytes
        self._said: set[str] = set()
        self._puts = 0
        self.writable = True
        self.evict()

    def entry(self, key: str) -> Path:
        return self.path / key[:2] / f"{key}.json"

    def get(self, key: str) -> PageResult | None:
        path = self.entry(key)
        if not path.exists():
            path = self.entry(self._target(key))
        try:
            payload = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            self._fault("read", exc)
            return None
        _touch(path)
        return decode(payload, self._fault)

    def put(self, key: str, sha256: str, page: PageResult) -> None:
        if page.error is not None or not self.writable:
            return
        if self._write(self.entry(key), encode(page)):
            self._puts += 1
            if self._puts % EVICT_EVERY == 0:
                self.evict()

    def alias(self, name: str, key: str) -> None:
        """Let ``name`` find the page stored under ``key`` (or under what ``key`` finds)."""
        target, path = self._target(key), self.aliases / name[:2] / name
        if self._target(name) != target and self.writable:   # a rerun writes nothing
            self._write(path, target)

    def _target(self, key: str) -> str:
        try:
            return (self.aliases / key[:2] / key).read_text(encoding="utf-8").strip() or key
        except (OSError, UnicodeDecodeError):
            return key

    def _write(self, target: Path, text: str) -> bool:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(target, text)
        except OSError as exc:
            self.writable = False
            self._fault("write", exc)
            return False
        return True

    def evict(self) -> None:
        """Past ``max_bytes`` of page files, remove those used longest ago."""
        if self.max_bytes is None or not self.writable:
            return
        try:
            entries = [(stat.st_mtime, stat.st_size, e.path)
                       for folder in os.scandir(self.path) if folder.is_dir()
                       for e in os.scandir(folder.path) if e.name.endswith(".json")
                       for stat in (e.stat(),)]
        except OSError as exc:   # one that cannot be pruned must not grow either
            self.writable = False
            self._fault("write", exc)
            return
        total = sum(size for _, size, _ in entries)
        if total <= self.max_bytes:
            return
        excess = total - int(self.max_bytes * EVICT_TO)
        for _, size, path in sorted(entries):
            if excess <= 0:
                break
            with contextlib.suppress(FileNotFoundError):   # another machine was first
                os.unlink(path)
            excess -= size

    def _fault(self, kind: str, exc: Exception) -> None:
        say_fault(self._said, kind, self.path, exc)

    def close(self) -> None:
        """Nothing to release: every entry is closed as soon as it is written."""


def _touch(path: Path) -> None:
    """Mark a hit as used, at most once per ``TOUCH_AFTER_S`` (reruns stay read-only)."""
    now = time.time()
    with contextlib.suppress(OSError):
        if path.stat().st_mtime < now - TOUCH_AFTER_S:
            os.utime(path, (now, now))
