"""The ``sqlite`` cache layout: every page in one sqlite file, safe for several
processes on one machine (its WAL journal with a busy timeout serialises writers).

Pages are dropped least recently used first once the file's pages pass the bound.
A file that is not a sqlite database is moved aside; one this user may not read or
write, or one that stays locked, is left untouched and raises (no cache this run).
"""

from __future__ import annotations

import errno
import os
import sqlite3
import threading
import time
from pathlib import Path

from ..document import PageResult
from .cache_entries import EVICT_EVERY, EVICT_TO, TOUCH_AFTER_S, decode, encode, log, say_fault

CACHE_FILE = "ovisocr-pages.sqlite"
_SQLITE_CORRUPT, _SQLITE_NOTADB = 11, 26   # sqlite's result codes (named in 3.11+)
_SCHEMA = ("""CREATE TABLE IF NOT EXISTS pages (
    key TEXT PRIMARY KEY,
    source_sha256 TEXT NOT NULL,
    page_number INTEGER NOT NULL,
    result TEXT NOT NULL,
    created REAL NOT NULL,
    used REAL)""",
           "CREATE TABLE IF NOT EXISTS aliases (key TEXT PRIMARY KEY, target TEXT NOT NULL)")


class PageCache:
    """Thread-safe access to the cache file; call it from worker threads, not the loop."""

    def __init__(self, directory: str | os.PathLike[str], max_bytes: int | None = None
                 ) -> None:
        """Open (or create) the cache in ``directory``; raises OSError or sqlite3.Error
        when it cannot hold one (the session then runs without a cache)."""
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / CACHE_FILE
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._said: set[str] = set()
        self._puts = 0
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
        self.evict()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=60, check_same_thread=False,
                             isolation_level=None)
        try:
            db.execute("PRAGMA busy_timeout = 60000")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            for statement in _SCHEMA:
                db.execute(statement)
            _add_used_column(db)
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def get(self, key: str) -> PageResult | None:
        """The stored page with its elements, or None (absent or unreadable); a hit marks
        the entry used (for eviction)."""
        now = time.time()
        try:
            with self._lock:
                row = self._db.execute("SELECT result, used FROM pages WHERE key = ?",
                                       (key,)).fetchone()
                if row is None:
                    key = self._target(key)
                    row = self._db.execute("SELECT result, used FROM pages WHERE key = ?",
                                           (key,)).fetchone()
                if row is not None and self.writable and (row[1] or 0) < now - TOUCH_AFTER_S:
                    self._db.execute("UPDATE pages SET used = ? WHERE key = ?", (now, key))
        except sqlite3.Error as exc:
            self._fault("read", exc)
            return None
        return None if row is None else decode(row[0], self._fault)

    def put(self, key: str, sha256: str, page: PageResult) -> None:
        """Store a finished page with its elements (crops are not stored)."""
        if page.error is not None or not self.writable:
            return
        payload, now = encode(page), time.time()
        try:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO pages (key, source_sha256, page_number, result, "
                    "created, used) VALUES (?, ?, ?, ?, ?, ?)",
                    (key, sha256, page.page_number, payload, now, now))
                self._puts += 1
        except sqlite3.Error as exc:
            self.writable = False
            self._fault("write", exc)
            return
        if self._puts % EVICT_EVERY == 0:
            self.evict()

    def alias(self, name: str, key: str) -> None:
        """Let ``name`` find the page stored under ``key`` (or under what ``key`` finds):
        a page's file key and its place in a file both lead to the one stored copy."""
        if not self.writable:
            return
        try:
            with self._lock:
                target = self._target(key)
                self._db.execute("INSERT INTO aliases (key, target) VALUES (?, ?) ON CONFLICT"
                                 "(key) DO UPDATE SET target = excluded.target WHERE target "
                                 "!= excluded.target", (name, target))
        except sqlite3.Error as exc:
            self._fault("write", exc)

    def _target(self, key: str) -> str:
        row = self._db.execute("SELECT target FROM aliases WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row is not None else key

    def evict(self) -> None:
        """Past ``max_bytes`` of pages, drop those used longest ago."""
        if self.max_bytes is None or not self.writable:
            return
        try:
            with self._lock:
                total = self._db.execute(
                    "SELECT COALESCE(SUM(LENGTH(result)), 0) FROM pages").fetchone()[0]
                if total <= self.max_bytes:
                    return
                doomed, excess = [], total - int(self.max_bytes * EVICT_TO)
                for key, size in self._db.execute(
                        "SELECT key, LENGTH(result) FROM pages ORDER BY COALESCE(used, created)"):
                    if excess <= 0:
                        break
                    doomed.append((key,))
                    excess -= size
                self._db.executemany("DELETE FROM pages WHERE key = ?", doomed)
                self._db.execute("DELETE FROM aliases WHERE target NOT IN "
                                 "(SELECT key FROM pages)")
        except sqlite3.Error as exc:   # one that cannot be pruned must not grow either
            self.writable = False
            self._fault("write", exc)

    def _fault(self, kind: str, exc: Exception) -> None:
        say_fault(self._said, kind, self.path, exc)

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _add_used_column(db: sqlite3.Connection) -> None:
    """Caches made before eviction lack ``used``; add it (another process may too)."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(pages)")}
    if "used" not in columns:
        try:
            db.execute("ALTER TABLE pages ADD COLUMN used REAL")
        except sqlite3.OperationalError as exc:
            if "duplicate column" not in str(exc):
                raise


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
