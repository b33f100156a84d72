"""The opt-in result cache (``cache_dir=``): finished pages, in one of two layouts.

``sqlite`` (the default) keeps every page in one sqlite file: fast, and safe for
several processes on one machine. ``files`` keeps each page in its own JSON file
``pages/<2 hex>/<64 hex>.json``, written whole by rename: safe for many machines
sharing a network folder (where sqlite's locking is not), and one object per
page when the folder is synced to or mounted from S3-style storage.

Entries are content-addressed: the key hashes the input's content hash, the page
number, the render settings and the :class:`RequestRecipe` fingerprint (model,
prompt, every request as sent, every guard setting), so a renamed file still hits
and a setting that changes the answer never returns a stale page.
Each page is committed as it finishes, so a run killed midway resumes without
redoing finished pages, and a rerun of the same corpus sends no OCR request.

Several processes may share one sqlite cache: its WAL journal with a busy timeout
serialises writers. An entry that no longer validates is ignored (and replaced
when the page is parsed again); a file that is not a sqlite database is moved
aside. A cache this user may not read or write, or one that stays locked, is
left untouched: the run goes on without it (one warning). Only pages with
content (or blank pages) are stored, never failures.

A cache fault never stops a run: an entry that cannot be read is a miss, a
cache that cannot be written stops being written, each said once per run.
Keys are content hashes; they never appear in logs.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from ..client.request import RequestRecipe
from ..config import RenderSettings
from ..document import PageResult
from ..options import CacheLayout
from ..writes import write_atomically

log = logging.getLogger("ovisocr_loader")

CACHE_FILE = "ovisocr-pages.sqlite"
PAGES_FOLDER = "pages"
_SQLITE_CORRUPT, _SQLITE_NOTADB = 11, 26   # sqlite's result codes (named in 3.11+)
_SCHEMA = """CREATE TABLE IF NOT EXISTS pages (
    key TEXT PRIMARY KEY,
    source_sha256 TEXT NOT NULL,
    page_number INTEGER NOT NULL,
    result TEXT NOT NULL,
    created REAL NOT NULL)"""


def page_key(sha256: str, page_number: int, render: RenderSettings, recipe: RequestRecipe
             ) -> str:
    """The content address of one page's result (PNG compression is lossless: not in it)."""
    material: dict[str, object] = {
        "sha256": sha256, "page": page_number, "dpi": render.dpi,
        "min_pixels": render.min_pixels, "max_pixels": render.max_pixels,
        "recipe": recipe.fingerprint()}
    if render.orientation != "off":   # absent when off: keys made before it existed still hit
        material["orientation"] = render.orientation
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


class PageCache:
    """Thread-safe access to the cache file; call it from worker threads, not the loop."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        """Open (or create) the cache in ``directory``; raises OSError or sqlite3.Error
        when it cannot hold one (the session then runs without a cache)."""
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / CACHE_FILE
        self._lock = threading.Lock()
        self._said: set[str] = set()
        self.writable = True
        _check_access(self.path)
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as exc:
            if not _corrupt(exc):   # busy, read-only, cannot open: the file may be fine
                raise
            aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
            log.warning("cache %s is unreadable (%s); moved to %s, starting afresh",
                        self.path, exc, aside)
            self.path.replace(aside)
            self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=60, check_same_thread=False,
                             isolation_level=None)
        try:
            db.execute("PRAGMA busy_timeout = 60000")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute(_SCHEMA)
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def get(self, key: str) -> PageResult | None:
        """The stored page with its elements, or None (absent or unreadable)."""
        try:
            with self._lock:
                row = self._db.execute("SELECT result FROM pages WHERE key = ?",
                                       (key,)).fetchone()
        except sqlite3.Error as exc:
            self._fault("read", exc)
            return None
        return None if row is None else _decode(row[0], self._fault)

    def put(self, key: str, sha256: str, page: PageResult) -> None:
        """Store a finished page with its elements (crops are not stored)."""
        if page.error is not None or not self.writable:
            return
        payload = _encode(page)
        try:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO pages (key, source_sha256, page_number, result, "
                    "created) VALUES (?, ?, ?, ?, ?)",
                    (key, sha256, page.page_number, payload, time.time()))
        except sqlite3.Error as exc:
            self.writable = False
            self._fault("write", exc)

    def _fault(self, kind: str, exc: Exception) -> None:
        _say_fault(self._said, kind, self.path, exc)

    def close(self) -> None:
        with self._lock:
            self._db.close()


class PageFiles:
    """The ``files`` layout: one JSON file per page, each written whole (temp file,
    then rename), so readers on any machine see a page completely or not at all."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        """Use (or create) ``directory``; raises OSError when it cannot hold a cache."""
        self.path = Path(directory) / PAGES_FOLDER
        self.path.mkdir(parents=True, exist_ok=True)
        self._said: set[str] = set()
        self.writable = True

    def entry(self, key: str) -> Path:
        return self.path / key[:2] / f"{key}.json"

    def get(self, key: str) -> PageResult | None:
        try:
            payload = self.entry(key).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            self._fault("read", exc)
            return None
        return _decode(payload, self._fault)

    def put(self, key: str, sha256: str, page: PageResult) -> None:
        if page.error is not None or not self.writable:
            return
        target = self.entry(key)
        try:
            target.parent.mkdir(exist_ok=True)
            write_atomically(target, _encode(page))
        except OSError as exc:
            self.writable = False
            self._fault("write", exc)

    def _fault(self, kind: str, exc: Exception) -> None:
        _say_fault(self._said, kind, self.path, exc)

    def close(self) -> None:
        """Nothing to release: every entry is closed as soon as it is written."""


def _check_access(path: Path) -> None:
    """Raise ``PermissionError`` for a cache file this user may not read and write: a
    shared cache is not thrown away as corrupt over a permission."""
    if path.exists() and not os.access(path, os.R_OK | os.W_OK):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))


def _corrupt(exc: sqlite3.DatabaseError) -> bool:
    """Whether sqlite said the file is not a database (or a damaged one), as opposed to
    one it could not open, lock or write (``OperationalError``)."""
    code = getattr(exc, "sqlite_errorcode", None)   # Python 3.11+
    if code is not None:
        return code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
    return type(exc) is sqlite3.DatabaseError


def open_page_store(directory: str, layout: CacheLayout = "sqlite") -> PageCache | PageFiles:
    """The cache in ``directory`` in the given layout; raises OSError or sqlite3.Error."""
    if layout == "files":
        return PageFiles(directory)
    return PageCache(directory)


def _encode(page: PageResult) -> str:
    """What is stored: the page with its elements (parsed once, when the page was read),
    without figure crops, which belong to a run's own ``figures`` setting."""
    return page.model_dump_json(exclude={"cached": True,
                                         "elements": {"__all__": {"image_png", "image_path"}}})


def _decode(payload: str, fault: Callable[[str, Exception], None]) -> PageResult | None:
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


def _say_fault(said: set[str], kind: str, where: Path, exc: Exception) -> None:
    """Say each kind of cache fault once; later ones only at debug level."""
    messages = {"read": "cannot read from the cache %s (%s); pages not found are parsed",
                "entry": "ignoring unreadable entries of the cache %s (%s); those pages "
                         "are parsed again",
                "write": "cannot write to the cache %s (%s); this run goes on without "
                         "storing pages"}
    level = logging.DEBUG if kind in said else logging.WARNING
    said.add(kind)
    log.log(level, messages[kind], where, f"{type(exc).__name__}: {exc}")
