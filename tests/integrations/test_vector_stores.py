"""The whole path as users run it: scans -> OvisReader/OvisLoader -> an embedded Qdrant
(local mode) through each framework's own integration, filtered by metadata, with a
real embedding model (all-MiniLM-L6-v2 shipped in a wheel, offline)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from ovisocr_loader.langchain import OvisLoader
from ovisocr_loader.llama_index import OvisNodeParser, OvisReader
from ovisocr_loader.testing import Simulator

from .embeddings import model_path

pytestmark = pytest.mark.filterwarnings(
    "ignore:Payload indexes have no effect in the local Qdrant:UserWarning")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "vector_store_qdrant.py"


def _example() -> ModuleType:
    """The Qdrant example's own report and question (the example runs in test_examples)."""
    spec = importlib.util.spec_from_file_location("vector_store_qdrant", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def report(ovis_simulator: Simulator, tmp_path: Path) -> Path:
    _example().write_report(ovis_simulator, str(tmp_path))
    return tmp_path / "report.pdf"


def test_llama_index_qdrant_answers_with_the_page(ovis_simulator: Simulator, report: Path):
    from llama_index.core import SimpleDirectoryReader, StorageContext, VectorStoreIndex
    from llama_index.core.vector_stores import ExactMatchFilter, MetadataFilters
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding
    from llama_index.vector_stores.qdrant import QdrantVectorStore
    from qdrant_client import QdrantClient

    reader = OvisReader(base_url=ovis_simulator.base_url)
    docs = SimpleDirectoryReader(str(report.parent),
                                 file_extractor={".pdf": reader}).load_data()
    client = QdrantClient(location=":memory:")
    store = QdrantVectorStore(client=client, collection_name="scans")
    nodes = OvisNodeParser().get_nodes_from_documents(docs)
    index = VectorStoreIndex(nodes, storage_context=StorageContext.from_defaults(
        vector_store=store), embed_model=HuggingFaceEmbedding(model_name=model_path()))
    question = "What was the Baltic revenue in 2019?"
    (best,) = index.as_retriever(similarity_top_k=1).retrieve(question)
    assert best.node.metadata["page_numbers"] == "1,2"   # page 1's few lines run on
    assert "Baltic was 8,310 in 2019. Baltic was 9,875 in 2018." in best.node.get_content()
    page_three = MetadataFilters(filters=[ExactMatchFilter(key="page_label", value="3")])
    (other,) = index.as_retriever(similarity_top_k=1, filters=page_three).retrieve(question)
    assert other.node.metadata["page_label"] == "3" and "dredged" in other.node.get_content()
    assert client.count("scans").count == len(nodes)


def test_langchain_qdrant_filters_by_element_kind(ovis_simulator: Simulator, report: Path):
    from langchain_huggingface import HuggingFaceEmbeddings
    from langchain_qdrant import QdrantVectorStore
    from qdrant_client import models

    loader = OvisLoader(report, mode="elements", base_url=ovis_simulator.base_url)
    docs = [d for d in loader.load() if d.page_content]
    store = QdrantVectorStore.from_documents(
        docs, HuggingFaceEmbeddings(model_name=model_path()), location=":memory:",
        collection_name="scans")
    tables = models.Filter(must=[models.FieldCondition(
        key="metadata.category", match=models.MatchValue(value="Table"))])
    (best,) = store.similarity_search("Baltic revenue in 2019", k=1, filter=tables)
    assert best.metadata["category"] == "Table" and best.metadata["page_label"] == "2"
    assert "Baltic was 8,310 in 2019." in best.page_content
    # ids come from the content: loading and adding the same scan again adds nothing
    store.add_documents([d for d in loader.load() if d.page_content])
    assert store.client.count("scans").count == len(docs)
