"""Every metadata key the adapters write, declared once, with whether embedding
models and LLMs see it.

Both frameworks show metadata to the embedding model and the LLM unless told not
to; technical keys (flags, hashes, boxes, HTML) would only add noise there, so
they are kept for filtering and citing but hidden. LlamaIndex reads the hidden
set as ``excluded_embed_metadata_keys``/``excluded_llm_metadata_keys``; LangChain
has no such switch, and its users can drop :data:`HIDDEN` keys before embedding.
Values are always flat (str, int, float, bool or None) so every vector store
accepts them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetadataKey:
    """A key, whether an embedding model sees it, whether an LLM sees it, what it means."""

    name: str
    embed: bool
    llm: bool
    meaning: str


# where the text comes from
SOURCE = "source"
PAGE = "page"
PAGE_LABEL = "page_label"
PAGE_NUMBER = "page_number"
PAGE_NUMBERS = "page_numbers"
TOTAL_PAGES = "total_pages"
SOURCE_SHA256 = "source_sha256"
PAGE_WIDTH = "page_width"
PAGE_HEIGHT = "page_height"
PAGE_WIDTH_PT = "page_width_pt"
PAGE_HEIGHT_PT = "page_height_pt"
ROTATION = "rotation"
# how it was produced
OCR_MODEL = "ocr_model"
BLANK = "blank"
LOOP_TRIMMED = "loop_trimmed"
TRUNCATED = "truncated"
OCR_ERROR = "ocr_error"
# what it is
CATEGORY = "category"
ELEMENT_INDEX = "element_index"
HEADER_PATH = "header_path"
HEADING_PATH = "heading_path"
TABLE_HTML = "table_html"
TEXT_AS_HTML = "text_as_html"
LATEX = "latex"
# where a figure is
BBOX = "bbox"
PIXEL_BBOX = "pixel_bbox"
PDF_BBOX = "pdf_bbox"
IMAGE_PATH = "image_path"
FIGURES_DIR = "figures_dir"

KEYS: tuple[MetadataKey, ...] = (
    MetadataKey(SOURCE, True, True, "the input file (LangChain)"),
    MetadataKey(PAGE, True, True, "0-based page number (LangChain, as PyPDFLoader)"),
    MetadataKey(PAGE_LABEL, False, True, "1-based page number as text, for citations"),
    MetadataKey(PAGE_NUMBER, False, False, "1-based page number"),
    MetadataKey(PAGE_NUMBERS, False, False, "every page a chunk covers, comma-separated"),
    MetadataKey(TOTAL_PAGES, False, False, "pages in the input"),
    MetadataKey(SOURCE_SHA256, False, False, "content hash of the input (stable ids, crop names)"),
    MetadataKey(PAGE_WIDTH, False, False, "page image width in pixels"),
    MetadataKey(PAGE_HEIGHT, False, False, "page image height in pixels"),
    MetadataKey(PAGE_WIDTH_PT, False, False, "page width in PDF points (None for an image)"),
    MetadataKey(PAGE_HEIGHT_PT, False, False, "page height in PDF points (None for an image)"),
    MetadataKey(ROTATION, False, False, "clockwise degrees the page was turned upright "
                "before it was sent"),
    MetadataKey(OCR_MODEL, False, False, "the served model that read the page"),
    MetadataKey(BLANK, False, False, "the page held no content"),
    MetadataKey(LOOP_TRIMMED, False, False, "a repetition loop was cut from the answer"),
    MetadataKey(TRUNCATED, False, False, "the answer hit the token cap"),
    MetadataKey(OCR_ERROR, False, False, "'Kind: message' for a page (or file) that failed"),
    MetadataKey(CATEGORY, False, False, "element kind"),
    MetadataKey(ELEMENT_INDEX, False, False, "position of the element on its page"),
    MetadataKey(HEADER_PATH, True, True, "headings above the text, '/A/B/' (LlamaIndex)"),
    MetadataKey(HEADING_PATH, True, True, "headings above the text, 'A > B' (LangChain)"),
    MetadataKey(TABLE_HTML, False, False, "the table(s) as HTML (LlamaIndex)"),
    MetadataKey(TEXT_AS_HTML, False, False, "the table(s) as HTML (LangChain, as unstructured)"),
    MetadataKey(LATEX, False, False, "a formula's LaTeX"),
    MetadataKey(BBOX, False, False, "figure box in the model's 0-999 frame of the page image"),
    MetadataKey(PIXEL_BBOX, False, False, "figure box in page-image pixels"),
    MetadataKey(PDF_BBOX, False, False, "figure box in PDF points, origin top-left"),
    MetadataKey(IMAGE_PATH, False, False, "the figure's crop file"),
    MetadataKey(FIGURES_DIR, False, False, "where figure crops are written"),
)

#: Keys that describe a whole file, not a page: SimpleDirectoryReader's file statistics
#: and ours. A page's change-detection hash leaves them out, so editing one page of a
#: file re-embeds that page alone (they may then be stale on the pages left as they were).
FILE_WIDE: tuple[str, ...] = (SOURCE_SHA256, TOTAL_PAGES, "file_size", "creation_date",
                              "last_modified_date", "last_accessed_date")

#: Keys kept out of the text an embedding model sees.
NOT_EMBEDDED: tuple[str, ...] = tuple(key.name for key in KEYS if not key.embed)
#: Keys kept out of the text an LLM sees.
NOT_FOR_LLM: tuple[str, ...] = tuple(key.name for key in KEYS if not key.llm)
