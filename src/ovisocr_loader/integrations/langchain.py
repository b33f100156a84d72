"""LangChain adapters: ``OvisLoader`` (a document loader) and ``OvisBlobParser``.

Both map :class:`ParsedDocument` to LangChain ``Document``s with the keys
LangChain users already know: ``source``, ``page`` (0-based) and ``page_label``
as PyPDFLoader sets them, and ``category`` / ``text_as_html`` as the
unstructured loaders do. The loader composes a blob parser, as PyPDFLoader does.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, Literal

from langchain_core.document_loaders import BaseBlobParser, BaseLoader
from langchain_core.document_loaders.blob_loaders import Blob
from langchain_core.documents import Document

from ..chunking import DEFAULT_CHUNK_TOKENS, chunk_document
from ..document import PageResult, ParsedDocument
from ..elements import Element
from ..elements.token_estimate import approx_tokens
from ..jobs import DocumentJob
from ..parser import OvisParser
from ..sources import expand_paths
from . import metadata as keys
from .common import (
    content_hash,
    document_key,
    document_metadata,
    element_content,
    figure_caption,
    figure_metadata,
    keep_last_good,
    page_metadata,
    text_digest,
    walk_elements,
)

Mode = Literal["page", "single", "elements"]
PathInput = str | os.PathLike[str]

#: Element kinds in unstructured's category names, so existing filters keep working.
CATEGORIES = {"heading": "Title", "paragraph": "NarrativeText", "list": "ListItem",
              "table": "Table", "formula": "Formula", "figure": "Image",
              "caption": "FigureCaption", "code": "CodeSnippet"}
HEADING_SEPARATOR = " > "


class OvisBlobParser(BaseBlobParser):
    """Parse a blob (a path or in-memory bytes) holding a scanned PDF or page image.

    Example::

        from langchain_core.document_loaders import Blob
        from ovisocr_loader.langchain import OvisBlobParser

        parser = OvisBlobParser(base_url="http://gpu-box:8000/v1")
        docs = parser.parse(Blob.from_path("scan.pdf"))

    Parser settings are keyword arguments of :class:`~ovisocr_loader.OvisParser`
    (``base_url``, ``concurrency``, ``errors``, ``figures``, timeouts, …).
    """

    def __init__(self, *, mode: Mode = "page", pages_delimiter: str = "\n\f",
                 chunk_size: int | None = None,
                 length_function: Callable[[str], int] = approx_tokens,
                 **parser_options: Any) -> None:
        if mode not in ("page", "single", "elements"):
            raise ValueError('mode must be "page", "single" or "elements"')
        self.mode = mode
        self.pages_delimiter = pages_delimiter
        self.chunk_size = chunk_size
        self.length_function = length_function
        self.parser = OvisParser(**parser_options)

    def lazy_parse(self, blob: Blob) -> Iterator[Document]:
        """Documents of one blob; a page that failed carries ``ocr_error`` in its metadata."""
        for parsed in self.parser.parse_many([_blob_job(blob)]):
            yield from self.to_documents(parsed)

    def to_documents(self, parsed: ParsedDocument) -> list[Document]:
        """LangChain Documents for one parsed input, in the parser's mode."""
        if parsed.failed_pages:
            parsed = keep_last_good(parsed, self.parser)
        base = {keys.SOURCE: parsed.source, keys.TOTAL_PAGES: parsed.total_pages,
                keys.OCR_MODEL: parsed.model}
        key = document_key(parsed)
        if parsed.error is not None or self.mode == "single":
            text = self.pages_delimiter.join(p.markdown for p in parsed.pages)
            return [Document(id=document_id(key), page_content=text,
                             metadata={**base, **document_metadata(parsed)})]
        if self.mode == "page":
            return [Document(id=document_id(f"{key}_p{page.page_number}"),
                             page_content=page.markdown,
                             metadata={**base, **_page_keys(page.page_number),
                                       **page_metadata(page)})
                    for page in parsed.pages]
        # blank and failed pages have no elements: each stays on record as an empty Document
        empty = [Document(id=document_id(f"{key}_p{page.page_number}"), page_content="",
                          metadata={**base, **_page_keys(page.page_number), **page_metadata(page)})
                 for page in parsed.pages if not page.ok or page.blank]
        if self.chunk_size is not None:
            return empty + self._chunk_documents(parsed, key, base)
        return empty + self._element_documents(parsed, key, base)

    def _element_documents(self, parsed: ParsedDocument, key: str, base: dict[str, Any]
                           ) -> list[Document]:
        pages = {page.page_number: page for page in parsed.pages}
        docs = []
        for element, path in walk_elements(parsed):
            page = pages[element.page_number]
            meta = {**base, **_page_keys(page.page_number), **page_metadata(page),
                    keys.CATEGORY: _category(element, page), keys.ELEMENT_INDEX: element.index,
                    keys.HEADING_PATH: HEADING_SEPARATOR.join(path)}
            text = element_content(element)
            if element.table is not None:
                meta[keys.TEXT_AS_HTML] = element.table.html
            if element.kind == "figure":
                text = figure_caption(page.elements, element)
                meta.update(figure_metadata(element))
            if element.kind == "formula":
                meta[keys.LATEX] = element.latex
            docs.append(Document(id=document_id(f"{key}_p{element.page_number}_e{element.index}"),
                                 page_content=text, metadata=meta))
        return docs

    def _chunk_documents(self, parsed: ParsedDocument, key: str, base: dict[str, Any]
                         ) -> list[Document]:
        """One Document per chunk, then one per figure in it (category ``Image``, with its
        page and boxes), so a figure can be cited and cropped from a chunk search."""
        pages = {page.page_number: page for page in parsed.pages}
        docs = []
        per_page: dict[int, int] = {}
        for chunk in chunk_document(parsed, self.chunk_size or DEFAULT_CHUNK_TOKENS,
                                    count_tokens=self.length_function):
            first = chunk.pages[0]
            place = f"{key}_p{first}_c{per_page.get(first, 0)}"
            per_page[first] = per_page.get(first, 0) + 1
            meta = {**base, **_page_keys(chunk.pages[0]), keys.CATEGORY: "CompositeElement",
                    keys.PAGE_NUMBERS: ",".join(map(str, chunk.pages)),
                    keys.HEADING_PATH: HEADING_SEPARATOR.join(chunk.heading_path)}
            tables = [e.table.html for e in chunk.elements if e.table is not None]
            if tables:
                meta[keys.TEXT_AS_HTML] = "\n".join(tables)
            docs.append(Document(id=document_id(f"{place}_{text_digest(chunk.text)}"),
                                 page_content=chunk.text, metadata=meta))
            for figure in (e for e in chunk.elements if e.kind == "figure"):
                on_page = pages[figure.page_number].elements
                docs.append(Document(
                    id=document_id(f"{place}_p{figure.page_number}_e{figure.index}"),
                    page_content=figure_caption(on_page, figure),
                    metadata={**meta, **page_metadata(pages[figure.page_number]),
                              **_page_keys(figure.page_number),
                              keys.CATEGORY: CATEGORIES["figure"], **figure_metadata(figure)}))
        return docs


class OvisLoader(BaseLoader):
    """Load scanned PDFs and page images with OvisOCR2 served by vLLM.

    Example::

        from ovisocr_loader.langchain import OvisLoader

        loader = OvisLoader("scans/", base_url="http://gpu-box:8000/v1")
        for doc in loader.lazy_load():
            print(doc.metadata["source"], doc.metadata["page"], doc.page_content[:60])

    ``file_path`` is a path, a directory (searched recursively for PDFs and
    images), a glob pattern, or a list of them. Pages of all files share one
    in-flight limit (``concurrency``). Documents are yielded file by file in the
    order the files finish, each file's pages in page order; sort by
    ``(source, page)`` for a stable order.

    ``mode="page"`` (default) yields one Document per page, ``"single"`` one per
    file (pages joined with ``pages_delimiter``), ``"elements"`` one per element
    (or, with ``chunk_size``, one per structure-aware chunk).
    """

    def __init__(self, file_path: PathInput | Sequence[PathInput], *, mode: Mode = "page",
                 pages_delimiter: str = "\n\f", chunk_size: int | None = None,
                 length_function: Callable[[str], int] = approx_tokens,
                 password: str | None = None, **parser_options: Any) -> None:
        paths = [file_path] if isinstance(file_path, (str, os.PathLike)) else list(file_path)
        self.file_paths = expand_paths(paths)
        if not self.file_paths:
            raise FileNotFoundError(f"no PDF or image files in {paths}")
        self.password = password
        self.blob_parser = OvisBlobParser(mode=mode, pages_delimiter=pages_delimiter,
                                          chunk_size=chunk_size,
                                          length_function=length_function, **parser_options)

    def _jobs(self) -> list[DocumentJob]:
        return [DocumentJob(str(path), self.password) for path in self.file_paths]

    def lazy_load(self) -> Iterator[Document]:
        for parsed in self.blob_parser.parser.parse_many(self._jobs()):
            yield from self.blob_parser.to_documents(parsed)

    async def alazy_load(self) -> AsyncIterator[Document]:
        """Native async: runs on the caller's event loop, never starts another."""
        async for parsed in self.blob_parser.parser.aparse_many(self._jobs()):
            for doc in self.blob_parser.to_documents(parsed):
                yield doc


def document_id(key: str) -> str:
    """A UUID derived from the file's path (:func:`~.common.document_key`) and the place
    in it (and a chunk's text): stable across re-ingestion and processes (so stores
    update in place), a copy's its own, and accepted as a point id by every vector
    store (Qdrant takes only UUIDs or integers)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"ovisocr:{key}"))


def index_key(document: Document) -> str:
    """A ``key_encoder`` for LangChain's ``index()``: a UUID made from the SHA-256 of the
    Document's text and metadata. Strong, as LangChain advises over its SHA-1 default,
    and a point id every vector store takes (Qdrant refuses ``"sha256"``'s hex digests).
    """
    digest = content_hash(document.page_content, document.metadata)
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"ovisocr-index:{digest}"))


def _blob_job(blob: Blob) -> DocumentJob:
    """A blob backed by a file is read from its path; an in-memory one from its bytes."""
    if blob.data is None and blob.path is not None:
        return DocumentJob(str(blob.path), name=blob.source)
    return DocumentJob(blob.as_bytes(), name=blob.source or "<blob>")


def _page_keys(page_number: int) -> dict[str, Any]:
    return {keys.PAGE: page_number - 1, keys.PAGE_LABEL: str(page_number)}


def _category(element: Element, page: PageResult) -> str:
    if element.kind != "page_furniture":
        return CATEGORIES[element.kind]
    position = next(i for i, e in enumerate(page.elements) if e is element)
    return "Header" if position < len(page.elements) / 2 else "Footer"


__all__ = ["OvisBlobParser", "OvisLoader", "index_key"]
