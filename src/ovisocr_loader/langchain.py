"""LangChain integration (the ``langchain`` extra: ``pip install '.[langchain]'``).

``OvisLoader`` loads files, directories and globs; ``OvisBlobParser`` parses blobs
for ``GenericLoader``-style pipelines. Depends on langchain-core (and, for the
splitters the docs use, langchain-text-splitters).
"""

from .extras import require as _require

_require("langchain_core", "langchain-core", "langchain", "ovisocr_loader.langchain")

from .integrations.langchain import OvisBlobParser, OvisLoader, index_key  # noqa: E402

__all__ = ["OvisBlobParser", "OvisLoader", "index_key"]
