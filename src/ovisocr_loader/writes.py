"""Every file the package writes goes through here: whole or not at all.

A file is written to a temporary name in its own folder and renamed into place
once complete (``os.replace`` is atomic on one file system), so a full disk, a
file-size limit or a kill mid-write leaves the previous file, or none, never a
cut one that claims to be finished. A temporary file that cannot be completed
is removed; one left by ``kill -9`` is hidden (``.NAME.<hex>.tmp``).

Names from the file system may hold bytes that are not UTF-8 (Python keeps them
as surrogate escapes): :func:`shown_name` is how such a name is written into a
text file, and :func:`comment_safe` how any text goes into an HTML comment.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import tempfile
import uuid
from pathlib import Path

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def write_atomically(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` whole, or raise ``OSError`` naming
    ``path`` and leave whatever was there before."""
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    temp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        with open(temp, "xb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)
        if isinstance(exc, OSError):   # named after the file meant, not the temporary one
            raise OSError(exc.errno, exc.strerror or str(exc), str(target)) from exc
        raise


def check_writable_folder(folder: str | os.PathLike[str]) -> None:
    """Make ``folder`` (and its parents) and prove a file can be created in it;
    raise ``OSError`` naming the path when not, before any work is spent on it."""
    path = Path(folder)
    try:
        path.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(prefix=".ovisocr-probe-", dir=path)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), exc.filename or str(path)) from exc
    os.close(handle)
    os.unlink(probe)


def check_writable_file(path: str | os.PathLike[str]) -> None:
    """``check_writable_folder`` for the file's folder, and the file itself, when it
    exists, not read-only (its permissions say the user wants it kept)."""
    target = Path(path)
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(target))
    check_writable_folder(target.parent)
    if target.exists() and not os.access(target, os.W_OK):
        raise PermissionError(errno.EACCES, "Permission denied", str(target))


def write_failure(exc: OSError, where: str | os.PathLike[str]) -> str:
    """One line for a failed write, ``out/a.md: No space left on device`` rather than a
    traceback: the file the error names, else ``where``."""
    path = shown_name(exc.filename or where)
    return f"{path}: {exc.strerror or str(exc) or type(exc).__name__}"


def shown_name(name: str | os.PathLike[str]) -> str:
    """A path as text that any UTF-8 file can hold: bytes that are not UTF-8 as
    ``\\xff``, control characters as ``\\x0a``; every other character as it is."""
    text = os.fspath(name)
    if any("\udc80" <= c <= "\udcff" for c in text):
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def comment_safe(text: str) -> str:
    """``text`` fit to stand inside ``<!-- ... -->``: nothing in it can close the
    comment or open another (``-->`` becomes ``--&gt;``; the name stays readable)."""
    text = shown_name(text)
    return (text.replace("<!--", "&lt;!--").replace("--!>", "--!&gt;")
            .replace("-->", "--&gt;"))

