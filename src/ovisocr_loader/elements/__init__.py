"""Elements: page Markdown into typed elements. No I/O."""

from .markdown import parse_page, parse_page_or_text
from .model import Element, ElementKind, TableData
from .tables import parse_table
from .token_estimate import approx_tokens

__all__ = [
    "Element",
    "ElementKind",
    "TableData",
    "approx_tokens",
    "parse_page",
    "parse_page_or_text",
    "parse_table",
]
