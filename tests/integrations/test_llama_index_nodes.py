"""OvisNodeParser, and reader -> node parser -> embedding -> index end to end."""

from __future__ import annotations

import itertools
from pathlib import Path

from llama_index.core import SimpleDirectoryReader, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.schema import Document, ImageNode, MetadataMode, NodeRelationship, TextNode

from ovisocr_loader import OvisParser
from ovisocr_loader.llama_index import OvisNodeParser, OvisReader
from ovisocr_loader.testing import Simulator

from .conftest import Scans
from .embeddings import embed


class MiniLMEmbedding(BaseEmbedding):
    """LlamaIndex face of the offline all-MiniLM-L6-v2 model."""

    def _get_query_embedding(self, query: str) -> list[float]:
        return embed([query])[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return embed([query])[0]

    def _get_text_embedding(self, text: str) -> list[float]:
        return embed([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return embed(texts)


def report_pages(sim: Simulator, scans: Scans, **reader_options) -> list[Document]:
    return OvisReader(base_url=sim.base_url, **reader_options).load_data(
        scans.report, extra_info={"file_name": "report.pdf"})


def test_chunks_keep_pages_headings_and_table_html(ovis_simulator: Simulator, scans: Scans):
    pages = report_pages(ovis_simulator, scans)
    nodes = OvisNodeParser(page_breaks=True).get_nodes_from_documents(pages)
    assert all(isinstance(n, TextNode) for n in nodes)
    table = next(n for n in nodes if "Aurora" in n.text)
    assert "Aurora Tonnage: 1200." in table.text and "<table" not in table.text
    assert table.metadata["table_html"].startswith("<table>")
    assert table.metadata["page_label"] == "2" and table.metadata["page_number"] == 2
    assert table.metadata["header_path"] == "/Harbour report/Fleet/"   # carried over page 1
    assert table.metadata["file_name"] == "report.pdf"                # the reader's metadata
    embedded = table.get_content(metadata_mode=MetadataMode.EMBED)
    assert "table_html" not in embedded and "<td>" not in embedded
    assert "header_path: /Harbour report/Fleet/" in embedded
    # one page per chunk, the source is that page's Document, prev/next link the file in order
    assert [n.metadata["page_label"] for n in nodes] == ["1", "1", "2", "3"]
    assert [n.ref_doc_id for n in nodes] == [pages[0].id_, pages[0].id_, pages[1].id_,
                                             pages[2].id_]
    for before, after in itertools.pairwise(nodes):
        assert before.relationships[NodeRelationship.NEXT].node_id == after.node_id
        assert after.relationships[NodeRelationship.PREVIOUS].node_id == before.node_id
    assert "Figure 1: Map of the basin." in table.text     # a small table shares its chunk


def test_page_chunks_run_on_over_page_breaks_by_default(ovis_simulator: Simulator,
                                                        scans: Scans):
    pages = report_pages(ovis_simulator, scans)
    nodes = OvisNodeParser(chunk_size=4000).get_nodes_from_documents(pages)
    assert [n.metadata["page_numbers"] for n in nodes] == ["1", "1,2", "3"]
    assert [n.metadata["page_label"] for n in nodes] == ["1", "1", "3"]   # the first page
    assert [n.ref_doc_id for n in nodes] == [pages[0].id_, pages[0].id_, pages[2].id_]


def test_document_split_chunks_may_span_pages(ovis_simulator: Simulator, scans: Scans):
    (doc,) = report_pages(ovis_simulator, scans, split="document")
    nodes = OvisNodeParser(chunk_size=4000).get_nodes_from_documents([doc])
    assert len(nodes) == 3          # a heading starts a chunk; pages do not
    assert [n.metadata["page_numbers"] for n in nodes] == ["1", "1,2", "3"]
    assert nodes[1].metadata["page_label"] == "1"
    assert all(n.ref_doc_id == doc.id_ for n in nodes)


def test_figures_become_image_nodes_with_their_crop(ovis_simulator: Simulator, scans: Scans,
                                                    tmp_path: Path):
    pages = report_pages(ovis_simulator, scans, figures="crop", figures_dir=tmp_path / "crops")
    nodes = OvisNodeParser().get_nodes_from_documents(pages)
    (image,) = [n for n in nodes if isinstance(n, ImageNode)]
    assert image.image_path is not None and Path(image.image_path).is_file()
    assert image.image_path.startswith(str(tmp_path / "crops"))
    assert image.text == "Figure 1: Map of the basin."
    assert image.metadata["page_label"] == "2" and image.metadata["bbox"] == "100,600,500,900"
    assert image.ref_doc_id == pages[1].id_
    # citations survive the reader-to-node-parser hand-off: the same boxes as the reader's
    parsed = OvisParser(base_url=ovis_simulator.base_url).parse(scans.report)
    figure = next(e for e in parsed.pages[1].elements if e.kind == "figure")
    assert image.metadata["page_number"] == 2
    assert image.metadata["pixel_bbox"] == ",".join(map(str, figure.pixel_bbox))
    assert image.metadata["pdf_bbox"] == ",".join(f"{v:g}" for v in figure.pdf_bbox)
    embedded = image.get_content(metadata_mode=MetadataMode.EMBED)
    assert "pixel_bbox" not in embedded and "pdf_bbox" not in embedded


def test_pages_keep_their_geometry_in_typed_keys(ovis_simulator: Simulator, scans: Scans):
    docs = report_pages(ovis_simulator, scans)
    parsed = OvisParser(base_url=ovis_simulator.base_url).parse(scans.report)
    assert [(d.metadata["page_width"], d.metadata["page_height"], d.metadata["page_width_pt"],
             d.metadata["page_height_pt"], d.metadata["rotation"]) for d in docs] == [
        (p.width, p.height, *p.page_size_pt, 0) for p in parsed.pages]
    element_docs = report_pages(ovis_simulator, scans, split="element")
    figure = next(d for d in element_docs if d.metadata.get("category") == "figure")
    assert figure.metadata["pdf_bbox"] and figure.metadata["pixel_bbox"]
    assert figure.text == "Figure 1: Map of the basin."


def test_nodes_are_the_same_from_carried_elements_and_from_text(ovis_simulator: Simulator,
                                                                scans: Scans, tmp_path: Path):
    options = {"figures": "crop", "figures_dir": tmp_path / "crops"}
    pages = report_pages(ovis_simulator, scans, **options)
    through_json = [Document.from_dict(d.to_dict()) for d in pages]
    assert [(n.text, n.metadata) for n in OvisNodeParser().get_nodes_from_documents(pages)] == [
        (n.text, n.metadata) for n in OvisNodeParser().get_nodes_from_documents(through_json)]


def test_a_document_split_hands_its_elements_to_the_node_parser(ovis_simulator: Simulator,
                                                                 scans: Scans, tmp_path: Path):
    (doc,) = report_pages(ovis_simulator, scans, split="document", figures="crop",
                          figures_dir=tmp_path / "crops")
    # one Document for three pages has no page geometry in its metadata: the figure's
    # boxes come from the elements the reader parsed, handed over with the Document
    carried = OvisNodeParser().get_nodes_from_documents([doc])
    image = next(n for n in carried if isinstance(n, ImageNode))
    assert image.metadata["pixel_bbox"] and image.metadata["pdf_bbox"]
    assert image.metadata["page_number"] == 2
    # from its text alone (after JSON) the 0-999 box is all there is
    text_only = OvisNodeParser().get_nodes_from_documents([Document.from_dict(doc.to_dict())])
    image = next(n for n in text_only if isinstance(n, ImageNode))
    assert image.metadata["bbox"] == "100,600,500,900" and image.metadata["pixel_bbox"] is None


def test_running_headers_and_page_numbers_stay_out_of_chunks(ovis_simulator: Simulator):
    texts = [f"Acme Corp annual filing\n\nBody text of page {n} about topic {n}.\n\n{n}"
             for n in range(1, 5)]
    pages = [Document(id_=f"d_p{n}", text=t, metadata={"page_number": n,
                                                       "source_sha256": "d" * 64})
             for n, t in enumerate(texts, 1)]
    nodes = OvisNodeParser().get_nodes_from_documents(pages)
    assert [n.text for n in nodes] == ["\n\n".join(f"Body text of page {n} about topic {n}."
                                                   for n in range(1, 5))]
    assert nodes[0].metadata["page_numbers"] == "1,2,3,4"
    per_page = OvisNodeParser(page_breaks=True).get_nodes_from_documents(pages)
    assert [n.text for n in per_page] == [f"Body text of page {n} about topic {n}."
                                          for n in range(1, 5)]


def test_directory_to_vector_index_retrieves_the_table_page(ovis_simulator: Simulator,
                                                            scans: Scans):
    reader = OvisReader(base_url=ovis_simulator.base_url)
    docs = SimpleDirectoryReader(
        str(scans.root), file_extractor={".pdf": reader, ".png": reader, ".tif": reader}
    ).load_data()
    pipeline = IngestionPipeline(transformations=[OvisNodeParser(), MiniLMEmbedding()])
    nodes = pipeline.run(documents=docs)
    assert all(n.embedding is not None and len(n.embedding) == 384 for n in nodes)
    index = VectorStoreIndex(nodes, embed_model=MiniLMEmbedding())
    (best, *_) = index.as_retriever(similarity_top_k=2).retrieve(
        "What is the tonnage of the vessel Borealis?")
    assert "Borealis Tonnage: 950." in best.node.get_content()
    assert best.node.metadata["file_name"] == "report.pdf"
    assert best.node.metadata["page_numbers"] == "1,2"   # the heading on 1, the table on 2


def test_embedding_text_holds_no_empty_or_noisy_metadata(ovis_simulator: Simulator,
                                                          scans: Scans):
    docs = OvisReader(base_url=ovis_simulator.base_url).load_data(
        scans.report, extra_info={"file_path": "/data/scans/report.pdf"})
    words = OvisNodeParser(chunk_size=40, tokenizer=str.split)
    nodes = words.get_nodes_from_documents(docs)
    assert nodes[0].metadata["header_path"] == "/Harbour report/"
    for node in nodes:
        embedded = node.get_content(metadata_mode=MetadataMode.EMBED)
        assert "page_label" not in embedded and "file_path" not in embedded
        assert "header_path: /\n" not in embedded
        assert "page_label: " in node.get_content(metadata_mode=MetadataMode.LLM)
        # chunk_size counts the metadata the embedding model reads with the text
        assert len(embedded.split()) <= 40
    outlook = next(n for n in nodes if "quay walls" in n.text)
    assert outlook.get_content(metadata_mode=MetadataMode.EMBED).startswith(
        "header_path: /Harbour report/Outlook/")
    shown = OvisNodeParser(excluded_embed_metadata_keys=[]).get_nodes_from_documents(docs)
    assert "file_path: /data/scans/report.pdf" in shown[0].get_content(MetadataMode.EMBED)
