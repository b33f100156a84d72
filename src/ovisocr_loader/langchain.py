"""LangChain integration (``pip install "ovisocr-loader[langchain]"``).

``OvisLoader`` loads files, directories and globs; ``OvisBlobParser`` parses blobs
for ``GenericLoader``-style pipelines. Depends on langchain-core only.
"""

from .integrations.langchain import OvisBlobParser, OvisLoader

__all__ = ["OvisBlobParser", "OvisLoader"]
