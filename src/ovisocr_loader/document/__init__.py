"""The document: the parse result's model, and a file's pages read as one report."""

from .furniture import mark_running_furniture
from .model import (
    PAGE_FLAGS,
    SCHEMA_NAME,
    SCHEMA_VERSION,
    Attempt,
    AttemptPurpose,
    FinishReason,
    PageErrorInfo,
    PageResult,
    ParsedDocument,
    renumbered,
)
from .report import ReportBlock, read_report

__all__ = [
    "PAGE_FLAGS",
    "SCHEMA_NAME",
    "SCHEMA_VERSION",
    "Attempt",
    "AttemptPurpose",
    "FinishReason",
    "PageErrorInfo",
    "PageResult",
    "ParsedDocument",
    "ReportBlock",
    "mark_running_furniture",
    "read_report",
    "renumbered",
]
