"""OvisLoader and OvisBlobParser on the simulator, and loader -> splitter -> vector store."""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path

import pytest
from langchain_core.document_loaders import Blob
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_text_splitters import RecursiveCharacterTextSplitter

from ovisocr_loader.langchain import OvisBlobParser, OvisLoader
from ovisocr_loader.testing import (
    HttpError,
    LatencyModel,
    PageScript,
    Simulator,
    marked_pdf,
    synthetic_markdown,
)

from .conftest import FAX, MEMO, REPORT, Scans
from .embeddings import embed


class MiniLMEmbeddings(Embeddings):
    """LangChain face of the offline all-MiniLM-L6-v2 model."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return embed(texts)

    def embed_query(self, text: str) -> list[float]:
        return embed([text])[0]


def of(docs, path: Path):
    return [d for d in docs if d.metadata["source"] == str(path)]


def test_page_mode_follows_pypdfloader_metadata(ovis_simulator: Simulator, scans: Scans):
    docs = OvisLoader(scans.root, base_url=ovis_simulator.base_url).load()
    report = of(docs, scans.report)
    assert [d.page_content for d in report] == [*REPORT, ""]
    assert [d.metadata["page"] for d in report] == [0, 1, 2, 3]
    assert [d.metadata["page_label"] for d in report] == ["1", "2", "3", "4"]
    assert {d.metadata["total_pages"] for d in report} == {4}
    assert [d.metadata["blank"] for d in report] == [False, False, False, True]
    assert report[0].metadata["ocr_error"] is None
    assert report[0].metadata["ocr_model"] == ovis_simulator.model
    assert [d.page_content for d in of(docs, scans.fax)] == FAX
    assert [d.page_content for d in of(docs, scans.memo)] == [MEMO]
    # ids are UUIDs (every vector store takes them as point ids) derived from the content,
    # so loading the same scans again gives the same ids and stores dedupe
    ids = [str(d.id) for d in report]
    assert len(set(ids)) == 4 and all(uuid.UUID(i).version == 5 for i in ids)
    again = of(OvisLoader(scans.report, base_url=ovis_simulator.base_url).load(), scans.report)
    assert [d.id for d in again] == ids


def test_single_mode_joins_pages_with_the_delimiter(ovis_simulator: Simulator, scans: Scans):
    (doc,) = OvisLoader(scans.report, mode="single", base_url=ovis_simulator.base_url).load()
    assert doc.page_content == "\n\f".join([*REPORT, ""])
    assert doc.metadata["source"] == str(scans.report) and doc.metadata["total_pages"] == 4
    (custom,) = OvisLoader(scans.fax, mode="single", pages_delimiter="\n---\n",
                           base_url=ovis_simulator.base_url).load()
    assert custom.page_content == "\n---\n".join(FAX)


def test_elements_mode_uses_unstructured_categories(ovis_simulator: Simulator, scans: Scans):
    docs = OvisLoader(scans.report, mode="elements", base_url=ovis_simulator.base_url).load()
    content = [d for d in docs if "category" in d.metadata]
    assert [(d.metadata["page"], d.metadata["category"]) for d in content] == [
        (0, "Title"), (0, "NarrativeText"), (0, "Title"), (1, "NarrativeText"), (1, "Table"),
        (1, "Image"), (1, "FigureCaption"), (2, "Title"), (2, "NarrativeText")]
    table = next(d for d in content if d.metadata["category"] == "Table")
    assert table.page_content == "Vessel | Tonnage\nAurora Tonnage: 1200.\nBorealis Tonnage: 950."
    assert table.metadata["text_as_html"].startswith("<table><tr><th>Vessel")
    assert table.metadata["heading_path"] == "Harbour report > Fleet"
    image = next(d for d in content if d.metadata["category"] == "Image")
    assert image.metadata["bbox"] == "100,600,500,900"
    assert image.page_content == "Figure 1: Map of the basin."
    assert [d.metadata["page"] for d in docs if d.metadata.get("blank")] == [3]


def test_elements_mode_with_chunks(ovis_simulator: Simulator, scans: Scans):
    docs = OvisLoader(scans.report, mode="elements", chunk_size=4000,
                      base_url=ovis_simulator.base_url).load()
    blank, *rest = docs
    assert blank.metadata["blank"] and blank.metadata["page"] == 3
    assert [d.metadata["category"] for d in rest] == ["CompositeElement"] * 2 + [
        "Image", "CompositeElement"]
    chunks = [d for d in rest if d.metadata["category"] == "CompositeElement"]
    assert [d.metadata["page_numbers"] for d in chunks] == ["1", "1,2", "3"]
    assert "Borealis Tonnage: 950." in chunks[1].page_content
    assert chunks[1].metadata["text_as_html"].startswith("<table>")
    figure = rest[2]   # the figure of chunk 2, citable on its own
    assert figure.page_content == "Figure 1: Map of the basin."
    assert figure.metadata["page_number"] == 2 and figure.metadata["page"] == 1
    assert figure.metadata["bbox"] == "100,600,500,900"
    width, height = figure.metadata["page_width"], figure.metadata["page_height"]
    points = (figure.metadata["page_width_pt"], figure.metadata["page_height_pt"])
    left, top, right, bottom = map(float, figure.metadata["pixel_bbox"].split(","))
    assert (left, top, right, bottom) == (round(width * 0.1), round(height * 0.6),
                                          round(width * 0.5), round(height * 0.9))
    assert figure.metadata["pdf_bbox"] == ",".join(
        f"{v:g}" for v in (round(0.1 * points[0], 2), round(0.6 * points[1], 2),
                           round(0.5 * points[0], 2), round(0.9 * points[1], 2)))


def test_paths_lists_and_globs(ovis_simulator: Simulator, scans: Scans, tmp_path: Path):
    loader = OvisLoader([scans.memo, str(scans.root / "*.tif")],
                        base_url=ovis_simulator.base_url)
    assert loader.file_paths == [scans.memo, scans.fax]
    assert sorted(d.page_content for d in loader.load()) == sorted([MEMO, *FAX])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="no PDF or image files"):
        OvisLoader(empty)


def test_alazy_load_runs_on_the_callers_loop_and_shares_one_limit(tmp_path: Path):
    with Simulator(latency=LatencyModel(speed=10.0)) as sim:
        for n in range(12):
            pdf, (pid,) = marked_pdf(1)
            sim.register(pid, synthetic_markdown(str(n).encode()))
            (tmp_path / f"p{n:02}.pdf").write_bytes(pdf)
        loader = OvisLoader(tmp_path, base_url=sim.base_url, concurrency=4)

        async def consume() -> list[str]:
            return [doc.page_content async for doc in loader.alazy_load()]

        texts = asyncio.run(consume())
        assert sim.max_in_flight == 4
        assert sum(r.path == "/v1/models" for r in sim.requests) == 1
    assert len(texts) == 12 and all(texts)


def test_lazy_load_inside_a_running_loop(ovis_simulator: Simulator, scans: Scans):
    loader = OvisLoader(scans.memo, base_url=ovis_simulator.base_url)

    async def in_a_notebook() -> list[str]:
        return [doc.page_content for doc in loader.lazy_load()]

    assert asyncio.run(in_a_notebook()) == [MEMO]


def test_a_failed_page_is_flagged_and_logged(ovis_simulator: Simulator, tmp_path: Path,
                                             caplog: pytest.LogCaptureFixture):
    pdf, ids = marked_pdf(2)
    ovis_simulator.register(ids[0], "Page one.")
    ovis_simulator.register(ids[1], PageScript("x", faults={1: HttpError(400)}))
    path = tmp_path / "two.pdf"
    path.write_bytes(pdf)
    with caplog.at_level(logging.WARNING, logger="ovisocr_loader"):
        docs = OvisLoader(path, base_url=ovis_simulator.base_url).load()
    assert [d.page_content for d in docs] == ["Page one.", ""]
    assert docs[1].metadata["ocr_error"].startswith("ServerStatusError")
    assert any("two.pdf page 2 failed" in r.getMessage() for r in caplog.records)


def test_blob_parser_from_path_and_from_memory(ovis_simulator: Simulator, scans: Scans):
    parser = OvisBlobParser(base_url=ovis_simulator.base_url)
    from_path = parser.parse(Blob.from_path(scans.fax))
    assert [d.page_content for d in from_path] == FAX
    assert from_path[0].metadata["source"] == str(scans.fax)
    in_memory = parser.parse(Blob.from_data(scans.memo.read_bytes(), path="inbox/memo.png"))
    assert [d.page_content for d in in_memory] == [MEMO]
    assert in_memory[0].metadata["source"] == "inbox/memo.png"
    (broken,) = parser.parse(Blob.from_data(b"not a scan at all"))
    assert broken.page_content == "" and broken.metadata["ocr_error"].startswith(
        "UnsupportedFormatError")


def test_loader_splitter_vector_store_finds_the_table_page(ovis_simulator: Simulator,
                                                           scans: Scans):
    docs = OvisLoader(scans.root, base_url=ovis_simulator.base_url).load()
    splitter = RecursiveCharacterTextSplitter(chunk_size=200, chunk_overlap=0)
    chunks = splitter.split_documents(docs)
    store = InMemoryVectorStore(MiniLMEmbeddings())
    store.add_documents(chunks)
    (best,) = store.similarity_search("Which harbour vessel has a tonnage of 950?", k=1)
    assert "Borealis" in best.page_content
    assert best.metadata["source"] == str(scans.report)
    assert best.metadata["page"] == 1 and best.metadata["page_label"] == "2"
