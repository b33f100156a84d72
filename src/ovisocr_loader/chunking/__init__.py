"""Chunking: a report's blocks packed into retrievable chunks, for every integration."""

from .chunker import DEFAULT_CHUNK_TOKENS, Chunk, chunk_document, element_text

__all__ = ["DEFAULT_CHUNK_TOKENS", "Chunk", "chunk_document", "element_text"]
