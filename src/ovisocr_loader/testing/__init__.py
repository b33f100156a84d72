"""Test support shipped with the package: a simulated OvisOCR2 server and test pages.

No GPU or weights needed: the simulator speaks the same HTTP/SSE as vLLM, so the
real client is exercised end to end over loopback.
"""

from .folders import BROKEN_FILES, ScanFolder, scan_folder, write_scan
from .latency import FIELD_THROUGHPUT, GPU_PROFILES, GpuProfile, LatencyModel
from .pages import (
    draw_page_id,
    make_pdf,
    make_tiff,
    marked_pdf,
    next_page_id,
    page_image,
    read_page_id,
    read_turned_page_id,
    text_page,
    turned,
    write_pdf,
)
from .scripts import (
    PANGRAM,
    EndWithoutFinish,
    Fault,
    GiveUp,
    Hang,
    HttpError,
    MalformedJSON,
    MalformedSSE,
    PageScript,
    Reset,
    long_markdown,
    synthetic_markdown,
    tokenize,
    with_word_errors,
)
from .server import DEFAULT_MODEL, RequestRecord, Simulator

__all__ = [
    "BROKEN_FILES",
    "DEFAULT_MODEL",
    "FIELD_THROUGHPUT",
    "GPU_PROFILES",
    "PANGRAM",
    "EndWithoutFinish",
    "Fault",
    "GiveUp",
    "GpuProfile",
    "Hang",
    "HttpError",
    "LatencyModel",
    "MalformedJSON",
    "MalformedSSE",
    "PageScript",
    "RequestRecord",
    "Reset",
    "ScanFolder",
    "Simulator",
    "draw_page_id",
    "long_markdown",
    "make_pdf",
    "make_tiff",
    "marked_pdf",
    "next_page_id",
    "page_image",
    "read_page_id",
    "read_turned_page_id",
    "scan_folder",
    "synthetic_markdown",
    "text_page",
    "tokenize",
    "turned",
    "with_word_errors",
    "write_pdf",
    "write_scan",
]
