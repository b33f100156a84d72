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
    name: str
    shown: bool
    meaning: str


# where the text comes from
SOURCE = "source"
PAGE = "page"
PAGE_LABEL = "page_label"
PAGE_NUMBER = "page_number"
PAGE_NUMBERS = "page_numbers"
TOTAL_PAGES = "total_pages"
SOURCE_SHA256 = "source_sha256"
PAGE_GEOMETRY = "page_geometry"
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
    MetadataKey(SOURCE, True, "the input file (LangChain)"),
    MetadataKey(PAGE, True, "0-based page number (LangChain, as PyPDFLoader)"),
    MetadataKey(PAGE_LABEL, True, "1-based page number as text, for citations"),
    MetadataKey(PAGE_NUMBER, False, "1-based page number"),
    MetadataKey(PAGE_NUMBERS, False, "every page a chunk covers, comma-separated"),
    MetadataKey(TOTAL_PAGES, False, "pages in the input"),
    MetadataKey(SOURCE_SHA256, False, "content hash of the input (stable ids, crop names)"),
    MetadataKey(PAGE_GEOMETRY, False, "page image pixels and PDF points, and the turn "
                "upright, 'w,h[,w_pt,h_pt][@r]'; ';' between pages: lets a node parser "
                "rebuild figure boxes"),
    MetadataKey(OCR_MODEL, False, "the served model that read the page"),
    MetadataKey(BLANK, False, "the page held no content"),
    MetadataKey(LOOP_TRIMMED, False, "a repetition loop was cut from the answer"),
    MetadataKey(TRUNCATED, False, "the answer hit the token cap"),
    MetadataKey(OCR_ERROR, False, "'Kind: message' for a page (or file) that failed"),
    MetadataKey(CATEGORY, False, "element kind"),
    MetadataKey(ELEMENT_INDEX, False, "position of the element on its page"),
    MetadataKey(HEADER_PATH, True, "headings above the text, '/A/B/' (LlamaIndex)"),
    MetadataKey(HEADING_PATH, True, "headings above the text, 'A > B' (LangChain)"),
    MetadataKey(TABLE_HTML, False, "the table(s) as HTML (LlamaIndex)"),
    MetadataKey(TEXT_AS_HTML, False, "the table(s) as HTML (LangChain, as unstructured)"),
    MetadataKey(LATEX, False, "a formula's LaTeX"),
    MetadataKey(BBOX, False, "figure box in the model's 0-999 frame of the page image"),
    MetadataKey(PIXEL_BBOX, False, "figure box in page-image pixels"),
    MetadataKey(PDF_BBOX, False, "figure box in PDF points, origin top-left"),
    MetadataKey(IMAGE_PATH, False, "the figure's crop file"),
    MetadataKey(FIGURES_DIR, False, "where figure crops are written"),
)

#: Keys kept for filtering and citing, never shown to an embedding model or an LLM.
HIDDEN: tuple[str, ...] = tuple(key.name for key in KEYS if not key.shown)
