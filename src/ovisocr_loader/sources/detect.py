"""Turn what the caller passed (path, bytes, binary file) into a typed input.

Detection is by magic bytes, never by file name alone: a file named ``.pdf``
that is not a PDF gets a clear :class:`UnsupportedFormatError`.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

from ..errors import CorruptFileError, EmptyDocumentError, SourceError, UnsupportedFormatError
from ..paths import user_path

log = logging.getLogger("ovisocr_loader")

#: What ``parse`` accepts for one input.
Source = str | os.PathLike[str] | bytes | bytearray | memoryview | BinaryIO

ImageFormat = Literal["png", "jpeg", "gif", "tiff", "bmp", "webp"]

#: File suffixes that directory expansion and the integrations treat as supported.
SUPPORTED_SUFFIXES = (
    ".pdf", ".png", ".jpg", ".jpeg", ".webp", ".bmp", ".gif", ".tif", ".tiff",
)


@dataclass(frozen=True)
class SourceInput:
    """One input, read enough to know what it is.

    ``path`` is kept for files on disk so that PDFium reads them lazily; ``data``
    holds the bytes for in-memory inputs. ``sha256`` identifies the content (doc
    ids, cache keys) whatever the name.
    """

    name: str
    kind: Literal["pdf", "image"]
    image_format: ImageFormat | None
    sha256: str
    path: Path | None = None
    data: bytes | None = None


def sniff(head: bytes) -> Literal["pdf"] | ImageFormat | None:
    """Name the format from the first bytes of a file, or None."""
    if b"%PDF-" in head[:1024]:
        return "pdf"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "gif"
    if head.startswith((b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+")):
        return "tiff"
    if head.startswith(b"BM"):
        return "bmp"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    return None


def _hash_file(path: Path) -> str:
    """The file's content hash, computed once per version of the file: Ray workers open
    one long PDF once per page range, and hashing it whole each time would dominate."""
    stat = path.stat()
    return _hash_version(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=512)
def _hash_version(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def load_input(source: Source, *, name: str | None = None, content_hash: bool = True
               ) -> SourceInput:
    """Identify one input; raise a :class:`SourceError` naming it when it is unusable.

    ``content_hash=False`` leaves ``sha256`` empty for a file on disk instead of
    reading it whole: enough to count its pages (planning work), not to parse it.
    """
    if isinstance(source, (str, os.PathLike)):
        label = name or str(source)
        path = Path(user_path(source))
        head = _read_head(path, label)
        return _identified(label, head, _hash_file(path) if content_hash else "", path=path)
    label, data = _read_memory(source, name)
    return _identified(label, data[:1024], hashlib.sha256(data).hexdigest(), data=data)


def _identified(label: str, head: bytes, digest: str, *, path: Path | None = None,
                data: bytes | None = None) -> SourceInput:
    fmt = _format(head, label)
    if fmt == "pdf":
        return SourceInput(label, "pdf", None, digest, path, data)
    return SourceInput(label, "image", fmt, digest, path, data)


def _read_head(path: Path, label: str) -> bytes:
    """The first KiB of a file on disk, after checking it is a readable, non-empty file."""
    if not path.exists():
        raise SourceError("file not found", file=label)
    if path.is_dir():
        raise SourceError("is a directory, not a file", file=label)
    try:
        with path.open("rb") as fh:
            head = fh.read(1024)
    except OSError as exc:
        raise SourceError(f"cannot read file: {exc.strerror or exc}", file=label) from exc
    if path.stat().st_size == 0:
        raise EmptyDocumentError("file is empty (0 bytes)", file=label)
    return head


def _read_memory(source: object, name: str | None) -> tuple[str, bytes]:
    """The label and bytes of an in-memory input (bytes-like or a binary file)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        label, data = name or "<bytes>", bytes(source)
    elif hasattr(source, "read"):
        label, data = name or _stream_name(source), source.read()
        if not isinstance(data, bytes):
            raise UnsupportedFormatError("file object must be opened in binary mode", file=label)
    else:
        raise UnsupportedFormatError(
            f"cannot read a {type(source).__name__}; pass a path, bytes or a binary file",
            file=name or repr(source)[:80],
        )
    if not data:
        raise EmptyDocumentError("input is empty (0 bytes)", file=label)
    return label, data


def _format(head: bytes, label: str) -> Literal["pdf"] | ImageFormat:
    """The sniffed format, or the error a user needs (a ``.pdf`` without a PDF header is
    corrupt; anything else unrecognised is unsupported)."""
    fmt = sniff(head)
    if fmt is not None:
        return fmt
    if Path(label).suffix.lower() == ".pdf":
        raise CorruptFileError("not a PDF (no %PDF- header)", file=label)
    raise UnsupportedFormatError(
        "unsupported file type; expected PDF, PNG, JPEG, WebP, BMP, GIF or TIFF", file=label
    )


def _stream_name(stream: object) -> str:
    name = getattr(stream, "name", None)
    return str(name) if isinstance(name, (str, os.PathLike)) else "<stream>"


def expand_paths(paths: Sequence[str | os.PathLike[str]], *, follow_links: bool = False
                 ) -> list[Path]:
    """Expand directories (recursively, sorted) and glob patterns to the files they hold.

    A pattern that matches nothing is kept as it is, so that reading it fails with
    an error naming it rather than the input silently vanishing. Inside a directory,
    a link whose target lies outside it is left out with a warning, unless
    ``follow_links``: a folder's files are the folder's. A file is named by its path
    in the folder, never by its link's target.
    """
    out: list[Path] = []
    for given in paths:
        item = user_path(given)
        path = Path(item)
        if not path.exists() and any(c in item for c in "*?["):
            matches = sorted(Path(m) for m in glob.glob(item, recursive=True))
            out.extend(expand_paths([m for m in matches if m.is_dir()
                                     or m.suffix.lower() in SUPPORTED_SUFFIXES],
                                    follow_links=follow_links) or [path])
        elif path.is_dir():
            out.extend(_folder_files(path, follow_links))
        else:
            out.append(path)
    return out


def _folder_files(folder: Path, follow_links: bool) -> list[Path]:
    """The supported files under ``folder``, sorted; links out of it only when followed."""
    root = os.path.realpath(folder)
    seen_folders: set[str] = set()
    files: list[Path] = []
    for current, dirs, names in os.walk(folder, followlinks=follow_links,
                                        onerror=_unlisted):
        real = os.path.realpath(current)
        if real in seen_folders:   # a followed link back up the tree: no loop
            dirs[:] = []
            continue
        seen_folders.add(real)
        for name in names:
            path = Path(current) / name
            if path.suffix.lower() not in SUPPORTED_SUFFIXES or not path.is_file():
                continue
            if follow_links or not _leaves(path, root):
                files.append(path)
            else:
                log.warning("%s: a link to a file outside %s; not read (follow_links=True, "
                            "or --follow-links, reads it)", path, folder)
        dirs.sort()
    return sorted(files)


def _unlisted(exc: OSError) -> None:
    """A folder that cannot be listed is said, never skipped in silence."""
    log.warning("%s: cannot list this folder (%s); its files are not read", exc.filename,
                exc.strerror or exc)


def _leaves(path: Path, root: str) -> bool:
    """Whether ``path`` is a link whose target lies outside the folder ``root``."""
    if not path.is_symlink():
        return False
    target = os.path.realpath(path)
    return os.path.commonpath([root, target]) != root
