"""Elements: page Markdown into typed elements, and the shared chunker. No I/O."""

from .chunker import Chunk, chunk_document, element_text
from .markdown import mark_running_furniture, parse_page, parse_page_or_text
from .model import Element, ElementKind, TableData
from .tables import parse_table
from .token_estimate import approx_tokens

__all__ = [
    "Chunk",
    "Element",
    "ElementKind",
    "TableData",
    "approx_tokens",
    "chunk_document",
    "element_text",
    "mark_running_furniture",
    "parse_page",
    "parse_page_or_text",
    "parse_table",
]
