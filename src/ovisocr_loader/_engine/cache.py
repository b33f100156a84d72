"""The result cache: finished pages, addressed by what produced them.

On by default (see :func:`~ovisocr_loader.options.resolve_cache_dir`), in one of two
layouts: ``sqlite`` (:mod:`.cache_sqlite`, the default: one file, safe for several
processes on one machine) and ``files`` (:mod:`.cache_files`: a JSON file per page,
for a folder shared by several machines). Both drop the pages used longest ago
past their bound.

A page is stored once, under :func:`sent_key`, what was sent: the page image as
sent and the :class:`RequestRecipe` fingerprint (model, prompt, every request,
every guard setting). An edited file costs only its changed pages: its other pages
look the same and hit, wherever they sit in it. Two aliases lead to it:

- :func:`page_key`, the input's content hash, the page number, the render
  settings and the recipe: a rerun of an unchanged file hits without rendering;
- :func:`place_key`, a page of a file on disk: the last good read there, which an
  adapter keeps in an index when that page fails later.

Each page is committed as it finishes, so a run killed midway resumes without
redoing finished pages. Only pages with content (or blank pages) are stored, never
failures.

A cache fault never stops a run: an entry that cannot be read is a miss, a cache
that cannot be written stops being written, each said once per run. Keys are
content hashes; they never appear in logs.
"""

from __future__ import annotations

import hashlib
import json
import os

from ..client.request import RequestRecipe
from ..config import RenderSettings
from ..options import CacheLayout
from .cache_files import PAGES_FOLDER, PageFiles
from .cache_sqlite import CACHE_FILE, PageCache

__all__ = ["CACHE_FILE", "PAGES_FOLDER", "PageCache", "PageFiles", "open_page_store",
           "page_key", "place_key", "sent_key"]


def page_key(sha256: str, page_number: int, render: RenderSettings, recipe: RequestRecipe
             ) -> str:
    """The address of one page of one file's content (PNG compression is lossless: not
    in it)."""
    material: dict[str, object] = {
        "sha256": sha256, "page": page_number, "dpi": render.dpi,
        "min_pixels": render.min_pixels, "max_pixels": render.max_pixels,
        "recipe": recipe.fingerprint()}
    if render.orientation != "off":   # absent when off: keys made before it existed still hit
        material["orientation"] = render.orientation
    return _digest(material)


def sent_key(data_url: bytes, geometry: tuple[object, ...], recipe: RequestRecipe) -> str:
    """The address of what was sent: the page image (``data_url``), the page's geometry
    (size in points, DPI, turn: the boxes of the stored page depend on them) and the
    recipe."""
    digest = hashlib.sha256(data_url).hexdigest()
    return _digest({"image": digest, "geometry": list(geometry),
                    "recipe": recipe.fingerprint()})


def place_key(source: str, page_number: int) -> str:
    """The address of a page of a file on disk, whatever its content."""
    return _digest({"place": os.path.abspath(source), "page": page_number})


def open_page_store(directory: str, layout: CacheLayout = "sqlite",
                    max_bytes: int | None = None) -> PageCache | PageFiles:
    """The cache in ``directory`` in the given layout; raises OSError or sqlite3.Error."""
    if layout == "files":
        return PageFiles(directory, max_bytes)
    return PageCache(directory, max_bytes)


def _digest(material: dict[str, object]) -> str:
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()
