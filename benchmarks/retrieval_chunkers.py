"""The chunkers compared by bench_retrieval.py, each given the same page Documents.

Every chunker counts its budget in the embedding model's word pieces (the MiniLM
tokenizer), so "256 tokens" means the same for all. A chunk is what the index
sees (``embed``: LlamaIndex embeds a node's text with the metadata it does not
exclude; LangChain embeds ``page_content``) and the text that is checked for the
answer (``content``).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bs4 import BeautifulSoup

TokenCount = Callable[[str], int]


@dataclass(frozen=True)
class RetrievalChunk:
    page: str       # the file's name (bench_retrieval: one page per file)
    embed: str
    content: str
    pages: str = ""   # the pages the chunk cites ("1,2"), when its metadata says


@dataclass
class Inputs:
    """The same pages for every chunker, as each framework's loader returns them."""

    llama_docs: list[Any]        # OvisReader Documents through SimpleDirectoryReader
    langchain_pages: list[Any]   # OvisLoader Documents, mode="page"
    langchain_chunks: Callable[[int, TokenCount], list[Any]]  # OvisLoader chunk Documents


def _llama_chunks(nodes: list[Any]) -> list[RetrievalChunk]:
    from llama_index.core.schema import MetadataMode

    return [RetrievalChunk(str(n.metadata["file_name"]), n.get_content(MetadataMode.EMBED),
                           n.get_content(MetadataMode.NONE), _pages(n.metadata))
            for n in nodes if n.get_content(MetadataMode.NONE).strip()]


def _pages(metadata: dict[str, Any]) -> str:
    return str(metadata.get("page_numbers") or metadata.get("page_number") or "")


def _langchain_chunks(docs: list[Any]) -> list[RetrievalChunk]:
    from pathlib import Path

    return [RetrievalChunk(Path(d.metadata["source"]).name, d.page_content, d.page_content,
                           _pages(d.metadata)) for d in docs if d.page_content.strip()]


def ovis_node_parser(inputs: Inputs, budget: int, count: TokenCount) -> list[RetrievalChunk]:
    from ovisocr_loader.llama_index import OvisNodeParser

    parser = OvisNodeParser(chunk_size=budget, tokenizer=lambda text: range(count(text)))
    return _llama_chunks(parser.get_nodes_from_documents(inputs.llama_docs))


def ovis_node_parser_approx(inputs: Inputs, budget: int, count: TokenCount
                            ) -> list[RetrievalChunk]:
    """What users get without a tokenizer: chunk_size counted by the package's estimate."""
    from ovisocr_loader.llama_index import OvisNodeParser

    parser = OvisNodeParser(chunk_size=budget)
    return _llama_chunks(parser.get_nodes_from_documents(inputs.llama_docs))


def ovis_loader_chunks(inputs: Inputs, budget: int, count: TokenCount
                       ) -> list[RetrievalChunk]:
    docs = [d for d in inputs.langchain_chunks(budget, count)
            if d.metadata.get("category") == "CompositeElement"]
    return _langchain_chunks(docs)


def sentence_splitter(inputs: Inputs, budget: int, count: TokenCount
                      ) -> list[RetrievalChunk]:
    from llama_index.core.node_parser import SentenceSplitter

    splitter = SentenceSplitter(chunk_size=budget, chunk_overlap=budget // 5,
                                tokenizer=lambda text: range(count(text)))
    return _llama_chunks(splitter.get_nodes_from_documents(inputs.llama_docs))


def markdown_sentence(inputs: Inputs, budget: int, count: TokenCount
                      ) -> list[RetrievalChunk]:
    from llama_index.core.node_parser import MarkdownNodeParser, SentenceSplitter

    sections = MarkdownNodeParser().get_nodes_from_documents(inputs.llama_docs)
    splitter = SentenceSplitter(chunk_size=budget, chunk_overlap=budget // 5,
                                tokenizer=lambda text: range(count(text)))
    return _llama_chunks(splitter.get_nodes_from_documents(sections))


def _recursive(budget: int, count: TokenCount) -> Any:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter(chunk_size=budget, chunk_overlap=budget // 5,
                                          length_function=count)


def recursive_raw(inputs: Inputs, budget: int, count: TokenCount) -> list[RetrievalChunk]:
    return _langchain_chunks(_recursive(budget, count).split_documents(inputs.langchain_pages))


def flatten_tables(markdown: str) -> str:
    """Each HTML table as lines of cells, ``a | b | c``: the naive flattening."""
    soup = BeautifulSoup(markdown, "html.parser")
    for table in soup.find_all("table"):
        lines = [" | ".join(cell.get_text(" ", strip=True)
                            for cell in row.find_all(["td", "th"]))
                 for row in table.find_all("tr")]
        table.replace_with("\n".join(lines))
    return str(soup.get_text())


def recursive_flat(inputs: Inputs, budget: int, count: TokenCount) -> list[RetrievalChunk]:
    from langchain_core.documents import Document

    flat = [Document(page_content=flatten_tables(d.page_content), metadata=d.metadata)
            for d in inputs.langchain_pages]
    return _langchain_chunks(_recursive(budget, count).split_documents(flat))


def recursive_file_flat(inputs: Inputs, budget: int, count: TokenCount
                        ) -> list[RetrievalChunk]:
    """The splitter over each file's whole text (its pages joined in order, tables
    flattened): plain concatenation keeps a table's continuation beside its header."""
    from langchain_core.documents import Document

    files: dict[str, list[Any]] = {}
    for page in inputs.langchain_pages:
        files.setdefault(page.metadata["source"], []).append(page)
    whole = [Document(page_content="\n\n".join(flatten_tables(p.page_content) for p in pages),
                      metadata={"source": source}) for source, pages in files.items()]
    return _langchain_chunks(_recursive(budget, count).split_documents(whole))


def docling_hybrid(inputs: Inputs, budget: int, count: TokenCount) -> list[RetrievalChunk]:
    """docling reads the same page Markdown; HybridChunker with the MiniLM tokenizer,
    each chunk embedded as ``contextualize()`` gives it (headings, table triplets)."""
    from docling.datamodel.base_models import InputFormat
    from docling.document_converter import DocumentConverter
    from docling_core.transforms.chunker.hybrid_chunker import HybridChunker
    from docling_core.transforms.chunker.tokenizer.huggingface import HuggingFaceTokenizer
    from docling_core.types.io import DocumentStream
    from embedding import tokenizer

    converter = DocumentConverter(allowed_formats=[InputFormat.MD])
    chunker = HybridChunker(tokenizer=HuggingFaceTokenizer(tokenizer=tokenizer(),
                                                           max_tokens=budget))
    chunks = []
    for page in inputs.langchain_pages:
        name = page.metadata["source"].rsplit("/", 1)[-1]
        stream = DocumentStream(name="page.md", stream=io.BytesIO(page.page_content.encode()))
        document = converter.convert(stream).document
        for chunk in chunker.chunk(document):
            text = chunker.contextualize(chunk)
            chunks.append(RetrievalChunk(name, text, text))
    return chunks


def docling_available() -> bool:
    try:
        import docling.document_converter  # noqa: F401
    except ImportError:
        return False
    return True


Chunker = Callable[[Inputs, int, TokenCount], list[RetrievalChunk]]

#: name -> chunker, the package's own first.
CHUNKERS: dict[str, Chunker] = {
    "OvisNodeParser": ovis_node_parser,
    "OvisLoader chunks": ovis_loader_chunks,
    "OvisNodeParser, no tokenizer": ovis_node_parser_approx,
    "LC Recursive, rows flattened": recursive_flat,
    "LC Recursive, raw page": recursive_raw,
    "LI SentenceSplitter": sentence_splitter,
    "LI Markdown+Sentence": markdown_sentence,
    "docling HybridChunker": docling_hybrid,
}
#: for reports of several pages, the splitter over each whole file's text too
REPORT_CHUNKERS: dict[str, Chunker] = {**CHUNKERS,
                                       "LC Recursive, whole file flattened": recursive_file_flat}
OURS = ("OvisNodeParser", "OvisLoader chunks")
#: every chunker of the package (none of them is another chunker to beat)
PACKAGE = (*OURS, "OvisNodeParser, no tokenizer")
