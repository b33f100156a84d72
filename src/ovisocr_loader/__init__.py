"""ovisocr-loader: scanned documents to page-aware, structured RAG input with OvisOCR2.

Public names only; see docs/ for the guide. Framework adapters live in
``ovisocr_loader.llama_index`` and ``ovisocr_loader.langchain`` (optional extras).
"""

from .chunking import Chunk, chunk_document
from .config import GuardPolicy, HealthPolicy, RenderSettings, RetryPolicy, Timeouts
from .document import Attempt, PageErrorInfo, PageResult, ParsedDocument
from .elements import Element, TableData
from .errors import (
    CorruptFileError,
    EmptyDocumentError,
    FirstTokenTimeout,
    OvisLoaderError,
    PageError,
    PageTimeout,
    PasswordRequiredError,
    ServerConnectionError,
    ServerError,
    ServerProtocolError,
    ServerStatusError,
    ServerTimeoutError,
    ServerUnreachableError,
    SourceError,
    UnsupportedFormatError,
)
from .jobs import DocumentJob, DocumentStarted, PageFinished, ProgressEvent
from .options import ParseOptions
from .parser import OvisParser

__version__ = "0.1.0"

__all__ = [
    "Attempt",
    "Chunk",
    "CorruptFileError",
    "DocumentJob",
    "DocumentStarted",
    "Element",
    "EmptyDocumentError",
    "FirstTokenTimeout",
    "GuardPolicy",
    "HealthPolicy",
    "OvisLoaderError",
    "OvisParser",
    "PageError",
    "PageErrorInfo",
    "PageFinished",
    "PageResult",
    "PageTimeout",
    "ParseOptions",
    "ParsedDocument",
    "PasswordRequiredError",
    "ProgressEvent",
    "RenderSettings",
    "RetryPolicy",
    "ServerConnectionError",
    "ServerError",
    "ServerProtocolError",
    "ServerStatusError",
    "ServerTimeoutError",
    "ServerUnreachableError",
    "SourceError",
    "TableData",
    "Timeouts",
    "UnsupportedFormatError",
    "__version__",
    "chunk_document",
]
