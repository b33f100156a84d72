"""A report's table and paragraph cut by a page break read whole in every chunk path:
per-page Documents, ``split="document"``, Documents back from JSON, OvisLoader chunks."""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_index.core.schema import Document

from ovisocr_loader.langchain import OvisLoader
from ovisocr_loader.llama_index import OvisNodeParser, OvisReader
from ovisocr_loader.testing import PageScript, Simulator, marked_pdf

HEAD = ("<tr><td></td><td colspan=\"2\">Year ended December 31,</td></tr>"
        "<tr><td></td><td>2019</td><td>2018</td></tr>")
RUNNING = "Harbour Holdings annual report 2019"
PAGES = (
    f"{RUNNING}\n\n# Cash flows\n\nCash flows were as follows:\n\n"
    f"<table>{HEAD}<tr><td>Operating cash flow</td><td>5,120</td><td>4,870</td></tr>"
    "<tr><td>Capital expenditure</td><td>(709)</td><td>(826)</td></tr></table>\n\n7",
    f"{RUNNING}\n\n"
    "<table><tr><td>Free cash flow</td><td>4,411</td><td>4,044</td></tr>"
    "<tr><td>Dividends paid</td><td>(1,200)</td><td>(1,150)</td></tr></table>\n\n"
    "The board expects the fleet renewal programme to weigh on cash flows for the "
    "next three years, while the new vessels come into service and the old ones are "
    "sold in an orderly\n\n8",
    f"{RUNNING}\n\nfashion over the period.\n\n# Outlook\n\n"
    "Demand is expected to stay firm.\n\n9")


@pytest.fixture
def report_pdf(ovis_simulator: Simulator, tmp_path: Path) -> Path:
    pdf, ids = marked_pdf(len(PAGES))
    for page_id, markdown in zip(ids, PAGES, strict=True):
        ovis_simulator.register(page_id, PageScript(markdown))
    path = tmp_path / "harbour.pdf"
    path.write_bytes(pdf)
    return path


def assert_whole(chunks: list[tuple[str, str]]) -> None:
    """(text, page_numbers) per chunk: the continued rows under their years, the broken
    sentence whole, each in a chunk listing the pages it stands on, no running line."""
    table = next((t, p) for t, p in chunks if "Free cash flow" in t)
    assert "Free cash flow was 4,411 in 2019" in table[0]
    assert "Cash flows were as follows" in table[0]          # the intro came along
    assert table[1].startswith("1,2")
    sentence = next((t, p) for t, p in chunks if "in an orderly" in t)
    assert "sold in an orderly fashion over the period." in sentence[0]
    assert sentence[1].endswith("2,3")
    assert not any(RUNNING in t for t, _ in chunks)


def nodes_of(docs: list[Document]) -> list[tuple[str, str]]:
    nodes = OvisNodeParser(chunk_size=256).get_nodes_from_documents(docs)
    return [(n.get_content(), n.metadata["page_numbers"]) for n in nodes]


def test_per_page_documents(ovis_simulator: Simulator, report_pdf: Path):
    docs = OvisReader(base_url=ovis_simulator.base_url).load_data(report_pdf)
    assert len(docs) == 3
    assert_whole(nodes_of(docs))


def test_per_page_documents_back_from_json(ovis_simulator: Simulator, report_pdf: Path):
    docs = OvisReader(base_url=ovis_simulator.base_url).load_data(report_pdf)
    assert_whole(nodes_of([Document.from_dict(d.to_dict()) for d in docs]))


def test_one_document_per_file(ovis_simulator: Simulator, report_pdf: Path):
    docs = OvisReader(base_url=ovis_simulator.base_url, split="document").load_data(report_pdf)
    assert len(docs) == 1
    assert_whole(nodes_of(docs))
    assert_whole(nodes_of([Document.from_dict(d.to_dict()) for d in docs]))


def test_langchain_loader_chunks(ovis_simulator: Simulator, report_pdf: Path):
    docs = OvisLoader(report_pdf, mode="elements", chunk_size=256,
                      base_url=ovis_simulator.base_url).load()
    chunks = [(d.page_content, d.metadata["page_numbers"]) for d in docs
              if d.metadata["category"] == "CompositeElement"]
    assert_whole(chunks)
    assert all(d.metadata["page"] == 0 for d in docs if "Free cash flow" in d.page_content)
