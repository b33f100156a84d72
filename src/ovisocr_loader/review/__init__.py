"""The review site: each page image beside what was extracted from it.

Nobody can judge OCR output for RAG by reading JSON. :func:`write_site` turns
parsed documents into a static, self-contained folder of HTML pages (no script,
nothing fetched from the network) where every page image sits beside its
elements, figure boxes are drawn over the image and linked to their element,
and flagged pages (loop trimmed, truncated, blank, failed) stand out.
"""

from .site import write_site

__all__ = ["write_site"]
