"""LlamaIndex integration (the ``llama-index`` extra: ``pip install '.[llama-index]'``).

``OvisReader`` is a file reader for ``SimpleDirectoryReader``; ``OvisNodeParser``
chunks its documents with the structure-aware core chunker.
"""

from .extras import require as _require

_require("llama_index.core", "llama-index-core", "llama-index", "ovisocr_loader.llama_index")

from .integrations.llama_index import OvisNodeParser, OvisReader  # noqa: E402

__all__ = ["OvisNodeParser", "OvisReader"]
