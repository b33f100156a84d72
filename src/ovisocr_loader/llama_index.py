"""LlamaIndex integration (``pip install "ovisocr-loader[llama-index]"``).

``OvisReader`` is a file reader for ``SimpleDirectoryReader``; ``OvisNodeParser``
chunks its documents with the structure-aware core chunker.
"""

from .integrations.llama_index import OvisNodeParser, OvisReader

__all__ = ["OvisNodeParser", "OvisReader"]
