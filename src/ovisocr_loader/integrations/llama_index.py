"""LlamaIndex adapters: ``OvisReader`` (a file reader) and ``OvisNodeParser``.

Both are thin: the reader maps :class:`ParsedDocument` pages to ``Document``s, the
node parser maps the core chunker's chunks to ``TextNode``s (and figure crops to
``ImageNode``s). The reader stores settings only and keeps one cached
:class:`OvisParser` outside its serialized state, so concurrent ``aload_data``
calls (``SimpleDirectoryReader.aload_data`` gathers every file at once) share one
in-flight limit.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from pathlib import Path, PurePath
from typing import Any, Literal

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.node_parser import NodeParser
from llama_index.core.node_parser.node_utils import default_id_func
from llama_index.core.readers.base import BasePydanticReader
from llama_index.core.schema import (
    BaseNode,
    Document,
    ImageNode,
    MetadataMode,
    NodeRelationship,
    TextNode,
)

from ..chunking import DEFAULT_CHUNK_TOKENS, Chunk, chunk_document
from ..document import PageResult, ParsedDocument, mark_running_furniture
from ..elements import Element
from ..elements.crops import crop_file_name, figure_number
from ..elements.token_estimate import approx_tokens
from ..jobs import DocumentJob
from ..options import AUTO_START, ParseOptions
from ..parser import OvisParser
from ..paths import user_path
from . import metadata as keys
from .common import (
    PAGE_SEPARATOR,
    content_hash,
    document_key,
    document_metadata,
    document_text,
    element_content,
    figure_caption,
    figure_metadata,
    keep_last_good,
    page_from_text,
    page_metadata,
    text_digest,
    walk_elements,
)

log = logging.getLogger("ovisocr_loader")

Split = Literal["page", "document", "element"]
#: SimpleDirectoryReader shows file_path to the embedding model; measured, it costs
#: retrieval (docs/benchmarks.md), so node parsers hide it unless told otherwise.
NOISY_FILE_KEYS = ("file_path",)
#: Sequential sync calls with few pages in flight before the one-time advice.
_SLOW_SYNC_CALLS = 3
FileInput = str | os.PathLike[str] | bytes



class OvisReader(ParseOptions, BasePydanticReader):
    """Read scanned PDFs and page images with OvisOCR2 served by vLLM.

    Example::

        from llama_index.core import SimpleDirectoryReader
        from ovisocr_loader.llama_index import OvisReader

        reader = OvisReader(base_url="http://gpu-box:8000/v1")
        docs = SimpleDirectoryReader(
            "scans/", file_extractor={".pdf": reader, ".png": reader, ".tif": reader}
        ).load_data()

    Every :class:`~ovisocr_loader.OvisParser` option is a field here, with the same
    default and bounds (``guard``, ``retry`` and ``health`` take the same policy
    objects). ``split="page"`` (default) gives one ``Document`` per page,
    ``"document"`` one per file (pages joined with a form feed) and ``"element"``
    one per element. Ids are the file's path as given + page (+ element), as
    ``filename_as_id`` makes them, so a re-sync updates each page in place and a copy
    is indexed under its own name; a Document's ``hash`` covers its text and its
    page's metadata (not the file's size, dates or hash), so an edit re-embeds only
    the pages it changed. A page that fails when the cache holds an earlier good read
    of it yields that read (with a warning), so a sync never empties it.
    """

    is_remote: bool = True
    split: Split = "page"

    _parser: OvisParser | None = PrivateAttr(default=None)
    _parser_key: tuple[Any, ...] = PrivateAttr(default=())
    _sync_active: int = PrivateAttr(default=0)
    _small_sync_calls: int = PrivateAttr(default=0)
    _most_in_flight: int = PrivateAttr(default=0)
    _warned_sync: bool = PrivateAttr(default=False)
    _limit_seen: int = PrivateAttr(default=AUTO_START)

    def model_post_init(self, context: Any) -> None:
        if self.figures == "crop" and self.figures_dir is None:
            raise ValueError("figures='crop' needs figures_dir: Documents refer to crops by "
                             "path, they do not carry image bytes")

    @classmethod
    def class_name(cls) -> str:
        return "OvisReader"

    def parser(self) -> OvisParser:
        """The reader's one parser (built on first use, rebuilt if settings change)."""
        key = tuple(repr(getattr(self, name)) for name in type(self).model_fields)
        if self._parser is None or key != self._parser_key:
            self._parser = OvisParser.from_options(self)
            self._parser_key = key
        return self._parser

    def lazy_load_data(self, file: FileInput | Sequence[FileInput],
                       extra_info: dict[str, Any] | None = None, fs: Any = None,
                       ) -> Iterator[Document]:
        """Documents of one file (or several, through one limit, file by file as they finish)."""
        self._sync_active += 1
        overlapped = self._sync_active > 1
        pages = 0
        try:
            for parsed in self.parser().parse_many(_jobs(file, fs)):
                pages += len(parsed.pages)
                yield from self._documents(parsed, extra_info)
        finally:
            self._sync_active -= 1
        self._note_sync_call(pages, overlapped)

    def _note_sync_call(self, pages: int, overlapped: bool) -> None:
        """Warn once when sequential sync calls each keep only a few pages in flight:
        SimpleDirectoryReader.load_data reads one file at a time, whatever the limit."""
        settings = self.parser().settings
        limit = self.parser().concurrency_now or (
            settings.adaptive.start if settings.auto else int(settings.concurrency))
        in_flight = min(pages, limit)
        few = not overlapped and in_flight <= max(1, limit // 4)
        self._limit_seen = limit
        self._small_sync_calls = self._small_sync_calls + 1 if few else 0
        self._most_in_flight = max(self._most_in_flight, in_flight) if few else 0
        if self._small_sync_calls >= _SLOW_SYNC_CALLS and not self._warned_sync:
            self._warned_sync = True
            log.warning(
                "OvisReader.load_data is being called one file at a time (as "
                "SimpleDirectoryReader.load_data does): at most %d of %d pages were in "
                "flight. To read every file at once, use "
                "asyncio.run(SimpleDirectoryReader(...).aload_data()), or in a notebook "
                "await SimpleDirectoryReader(...).aload_data()",
                self._most_in_flight, self._limit_seen)

    async def aload_data(self, file: FileInput | Sequence[FileInput],
                         extra_info: dict[str, Any] | None = None, fs: Any = None,
                         ) -> list[Document]:
        """Native async: concurrent calls on one event loop share the reader's limit."""
        return [doc async for doc in self._alazy(file, extra_info, fs)]

    async def alazy_load_data(self, file: FileInput | Sequence[FileInput],
                              extra_info: dict[str, Any] | None = None, fs: Any = None,
                              ) -> list[Document]:
        return await self.aload_data(file, extra_info, fs)

    async def _alazy(self, file: FileInput | Sequence[FileInput],
                     extra_info: dict[str, Any] | None, fs: Any) -> AsyncIterator[Document]:
        jobs = await asyncio.to_thread(lambda: list(_jobs(file, fs)))
        async for parsed in self.parser().aparse_many(jobs):
            for doc in self._documents(parsed, extra_info):
                yield doc

    def _documents(self, parsed: ParsedDocument, extra_info: dict[str, Any] | None
                   ) -> list[Document]:
        base = {**(extra_info or {}), keys.TOTAL_PAGES: parsed.total_pages,
                keys.OCR_MODEL: parsed.model, keys.SOURCE_SHA256: parsed.sha256}
        if self.figures_dir is not None:
            base[keys.FIGURES_DIR] = self.figures_dir
        if parsed.failed_pages:
            parsed = keep_last_good(parsed, self.parser())
        key = document_key(parsed)
        if parsed.error is not None or self.split == "document":
            return [_document(document_text(parsed.pages), key,
                              {**base, **document_metadata(parsed)}, parsed.pages)]
        if self.split == "page":
            return [_document(page.markdown, f"{key}_p{page.page_number}",
                              {**base, **_page_keys(page.page_number), **page_metadata(page)},
                              [page])
                    for page in parsed.pages]
        return self._element_documents(parsed, key, base)

    def _element_documents(self, parsed: ParsedDocument, key: str, base: dict[str, Any]
                           ) -> list[Document]:
        docs = [_document("", f"{key}_p{page.page_number}",
                          {**base, **_page_keys(page.page_number), **page_metadata(page)}, [])
                for page in parsed.pages if not page.ok or page.blank]
        pages = {page.page_number: page for page in parsed.pages}
        for element, path in walk_elements(parsed):
            meta = {**base, **_page_keys(element.page_number),
                    **page_metadata(pages[element.page_number]),
                    keys.CATEGORY: element.kind, keys.ELEMENT_INDEX: element.index,
                    keys.HEADER_PATH: _header_path(path)}
            text = element_content(element)
            if element.table is not None:
                meta[keys.TABLE_HTML] = element.table.html
            if element.kind == "figure":
                text = figure_caption(pages[element.page_number].elements, element)
                meta.update(figure_metadata(element))
            docs.append(_document(text, f"{key}_p{element.page_number}_e{element.index}",
                                  meta, []))
        return docs


class OvisNodeParser(NodeParser):
    """Chunk OvisReader documents with the structure-aware core chunker.

    Tables are embedded as plain text (``header: value`` rows) with the original
    HTML kept in ``table_html`` metadata, excluded from embedding; a heading starts
    a chunk and sets ``header_path``; running headers, footers and page numbers are
    left out. Pages of one file (consecutive Documents with its ``source_sha256``)
    are read as one report: a table continued on the next page is one table, its
    header over the rows of both pages, a paragraph cut by the break is whole, and
    headings carry over; a chunk that draws on several pages lists them in
    ``page_numbers``, ``page_label`` its first, and belongs to that page's Document.
    ``page_breaks=True`` keeps every chunk on one page (``page_label`` cites exactly,
    and a sync re-embeds an edited page's chunks alone). With ``figures="crop"`` on
    the reader, figures become ``ImageNode``s pointing at their crop files.

    Works on any Document whose text is OvisOCR2 Markdown; other metadata passes
    through to the nodes.
    """

    chunk_size: int = Field(default=DEFAULT_CHUNK_TOKENS, ge=16, description="tokens per "
                            "chunk, Document metadata the embedding model reads included; "
                            "a table is split only when larger")
    tokenizer: Callable[[str], Sequence[Any]] | None = Field(
        default=None, exclude=True, description="counts chunk_size in this tokenizer's "
        "tokens (as SentenceSplitter's tokenizer); default: estimated (token_estimate)")
    excluded_embed_metadata_keys: list[str] = Field(
        default_factory=lambda: list(NOISY_FILE_KEYS), description="Document metadata "
        "keys also kept out of the nodes' embedding text (SimpleDirectoryReader's "
        "file_path by default: a path is noise to an embedding model)")
    header_path_separator: str = "/"
    include_furniture: bool = False
    page_breaks: bool = Field(default=False, description="end a chunk at every page "
                              "boundary of per-page Documents, instead of reading the "
                              "file's pages as one report")

    @classmethod
    def class_name(cls) -> str:
        return "OvisNodeParser"

    def _text_budget(self, owner: BaseNode) -> int:
        """chunk_size less the Document metadata the embedding model will read with each
        chunk (as SentenceSplitter counts it), so text and metadata fit together; at
        least half of chunk_size stays for the text."""
        shown = owner.model_copy(update={
            "excluded_embed_metadata_keys": sorted(self._not_embedded(owner))})
        metadata = shown.get_metadata_str(MetadataMode.EMBED)
        reserve = self._count(metadata + "\n\n") if metadata else 0
        return max(self.chunk_size // 2, self.chunk_size - reserve)

    def _not_embedded(self, owner: BaseNode) -> set[str]:
        return (set(owner.excluded_embed_metadata_keys) | set(keys.NOT_EMBEDDED)
                | set(self.excluded_embed_metadata_keys))

    def _count(self, text: str) -> int:
        return approx_tokens(text) if self.tokenizer is None else len(self.tokenizer(text))

    def _parse_nodes(self, nodes: Sequence[BaseNode], show_progress: bool = False,
                     **kwargs: Any) -> list[BaseNode]:
        out: list[BaseNode] = []
        for group in _consecutive_groups(nodes):
            out.extend(self._group_nodes(group))
        return out

    def _group_nodes(self, group: list[BaseNode]) -> list[BaseNode]:
        per_page = all(keys.PAGE_NUMBER in n.metadata for n in group)
        owners, pages = _group_pages(group, per_page)
        page_elements = {page.page_number: page.elements for page in pages}
        chunks = chunk_document(ParsedDocument(source="", pages=pages),
                                self._text_budget(group[0]), count_tokens=self._count,
                                include_furniture=self.include_furniture,
                                page_breaks=per_page and self.page_breaks)
        built: list[BaseNode] = []
        per_owner: dict[str, int] = {}
        for chunk in chunks:
            owner = owners[chunk.pages[0]] if chunk.pages else group[0]
            nodes = self._chunk_nodes(chunk, owner, owners, page_elements,
                                      per_owner.get(owner.id_, 0))
            per_owner[owner.id_] = per_owner.get(owner.id_, 0) + len(nodes)
            built.extend(nodes)
        if self.include_prev_next_rel:
            for before, after in itertools.pairwise(built):
                before.relationships[NodeRelationship.NEXT] = after.as_related_node_info()
                after.relationships[NodeRelationship.PREVIOUS] = before.as_related_node_info()
        return built

    def _chunk_nodes(self, chunk: Chunk, owner: BaseNode, owners: dict[int, BaseNode],
                     page_elements: dict[int, list[Element]], start: int) -> list[BaseNode]:
        """The chunk's text node, owned by ``owner`` (its first page's Document), and an
        image node per figure in it, owned by the figure's page's Document."""
        pages = chunk.pages or [int(owner.metadata.get(keys.PAGE_NUMBER, 1))]
        meta: dict[str, Any] = {**_page_keys(pages[0]),
                                keys.PAGE_NUMBERS: ",".join(map(str, pages)),
                                keys.HEADER_PATH: _header_path(chunk.heading_path,
                                                               self.header_path_separator)}
        tables = [e.table.html for e in chunk.elements if e.table is not None]
        if tables:
            meta[keys.TABLE_HTML] = "\n".join(tables)
        nodes: list[BaseNode] = []
        if chunk.text.strip():
            nodes.append(self._node(TextNode, chunk.text, meta, owner, start))
        for element in chunk.elements:
            if element.kind != "figure":
                continue
            on_page = page_elements[element.page_number]
            page_owner = owners.get(element.page_number, owner)
            path = _crop_path(page_owner, element, on_page)
            if path is None:
                continue
            figure = {**meta, **_page_keys(element.page_number), keys.CATEGORY: "figure",
                      **figure_metadata(element), keys.IMAGE_PATH: path}
            nodes.append(self._node(ImageNode, figure_caption(on_page, element), figure,
                                    page_owner, start + len(nodes), image_path=path))
        return nodes

    def _node(self, cls: type[TextNode], text: str, meta: dict[str, Any], owner: BaseNode,
              index: int, **extra: Any) -> TextNode:
        no_headings = _header_path([], self.header_path_separator)
        empty = {keys.HEADER_PATH} if meta.get(keys.HEADER_PATH) == no_headings else set()
        excluded = sorted(self._not_embedded(owner) | empty)
        excluded_llm = sorted(set(owner.excluded_llm_metadata_keys) | set(keys.NOT_FOR_LLM)
                              | empty)
        node = cls(id_=self._node_id(index, owner, text), text=text,
                   metadata={**owner.metadata, **meta} if self.include_metadata else meta,
                   excluded_embed_metadata_keys=excluded,
                   excluded_llm_metadata_keys=excluded_llm,
                   metadata_separator=owner.metadata_separator,
                   metadata_template=owner.metadata_template,
                   **extra)
        node.relationships[NodeRelationship.SOURCE] = owner.as_related_node_info()
        return node

    def _node_id(self, index: int, owner: BaseNode, text: str) -> str:
        """The node's id: ``id_func``'s when one was given, else made from the Document's
        id, the node's place in it and its text, so a rerun (in any process) gives the
        same ids and an edit changes only the edited page's."""
        if self.id_func is not default_id_func:
            return str(self.id_func(index, owner))
        return str(uuid.uuid5(uuid.NAMESPACE_URL,
                              f"ovisocr-node:{owner.id_}:{index}:{text_digest(text)}"))


class _ReadDocument(Document):
    """A Document as the reader made it, carrying the pages (with their elements) its
    text came from, so that OvisNodeParser chunks what was parsed once instead of
    parsing the text again. The pages are not serialised: a Document that went
    through JSON or another process is parsed from its text, like any other."""

    _pages: list[PageResult] = PrivateAttr(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        return "Document"

    @property
    def hash(self) -> str:
        """What change detection compares (``IngestionPipeline``'s docstore): the text
        and the page's own metadata, without what describes the whole file
        (:data:`~.metadata.FILE_WIDE`): editing one page changes that page's hash alone."""
        return content_hash(self.text, {k: v for k, v in self.metadata.items()
                                        if k not in keys.FILE_WIDE})


def _document(text: str, doc_id: str, metadata: dict[str, Any], pages: list[PageResult]
              ) -> Document:
    doc = _ReadDocument(  # type: ignore[call-arg]  # Document.__init__ takes text=
        id_=doc_id, text=text, metadata=metadata,
        excluded_embed_metadata_keys=[k for k in keys.NOT_EMBEDDED if k in metadata],
        excluded_llm_metadata_keys=[k for k in keys.NOT_FOR_LLM if k in metadata])
    doc._pages = pages
    return doc


def _carried_pages(node: BaseNode, per_page: bool) -> list[PageResult] | None:
    """The pages the reader made ``node`` from, if it still holds their text unchanged."""
    if not isinstance(node, _ReadDocument) or not node._pages:
        return None
    text = node._pages[0].markdown if per_page else document_text(node._pages)
    return node._pages if node.get_content() == text else None


def _group_pages(group: list[BaseNode], per_page: bool
                 ) -> tuple[dict[int, BaseNode], list[PageResult]]:
    """The pages of a group of nodes, each with the node it came from: carried from the
    reader, or parsed from the node's text (a ``split="document"`` text page by page)."""
    owners: dict[int, BaseNode] = {}
    pages: list[PageResult] = []
    parsed: list[PageResult] = []
    for node in group:
        node_pages = _carried_pages(node, per_page)
        if node_pages is None:
            if per_page:
                texts = [(int(node.metadata[keys.PAGE_NUMBER]), node.get_content())]
            else:
                texts = [(len(pages) + offset + 1, text) for offset, text
                         in enumerate(node.get_content().split(PAGE_SEPARATOR))]
            meta = node.metadata if per_page else {}
            node_pages = [page_from_text(number, text, meta) for number, text in texts]
            parsed.extend(node_pages)
        for page in node_pages:
            owners[page.page_number] = node
        pages.extend(node_pages)
    mark_running_furniture([page.elements for page in parsed])
    return owners, pages


def _page_keys(page_number: int) -> dict[str, Any]:
    return {keys.PAGE_LABEL: str(page_number), keys.PAGE_NUMBER: page_number}


def _header_path(path: list[str], separator: str = "/") -> str:
    return separator + separator.join(path) + separator if path else separator


def _crop_path(owner: BaseNode, figure: Element, on_page: list[Element]) -> str | None:
    """The crop file the reader wrote for ``figure``, found again by its stable name."""
    directory = owner.metadata.get(keys.FIGURES_DIR)
    sha = owner.metadata.get(keys.SOURCE_SHA256)
    if not directory or not sha:
        return None
    number = figure_number(on_page, figure)
    path = Path(directory) / crop_file_name(sha, figure.page_number, number)
    return str(path) if path.is_file() else None


def _consecutive_groups(nodes: Sequence[BaseNode]) -> Iterator[list[BaseNode]]:
    """Runs of page nodes from one source file (by content hash), in input order.

    Element documents (``split="element"``) are already chunk-sized: each stands alone.
    """
    group: list[BaseNode] = []
    for node in nodes:
        sha = node.metadata.get(keys.SOURCE_SHA256)
        alone = sha is None or keys.ELEMENT_INDEX in node.metadata
        if group and (alone or keys.ELEMENT_INDEX in group[-1].metadata
                      or sha != group[-1].metadata.get(keys.SOURCE_SHA256)):
            yield group
            group = []
        group.append(node)
    if group:
        yield group


def _jobs(file: FileInput | Sequence[FileInput], fs: Any) -> Iterable[DocumentJob]:
    files: list[FileInput] = list(file) if isinstance(file, (list, tuple)) else [file]  # type: ignore[list-item]
    for item in files:
        if fs is not None and not isinstance(item, bytes) and not _local(fs):
            with fs.open(str(item), "rb") as handle:
                yield DocumentJob(handle.read(), name=str(item))
        elif isinstance(item, PurePath):
            yield DocumentJob(user_path(item))
        else:
            yield DocumentJob(item)


def _local(fs: Any) -> bool:
    protocol = getattr(fs, "protocol", "file")
    return "file" in (protocol if isinstance(protocol, (tuple, list)) else (protocol,))


__all__ = ["OvisNodeParser", "OvisReader"]
