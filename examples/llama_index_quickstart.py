"""SimpleDirectoryReader -> OvisNodeParser -> VectorStoreIndex, against the simulator.

    pip install -e ".[llama-index]"
    python examples/llama_index_quickstart.py

With a real server, drop the simulator and pass ``base_url=`` (or set OVISOCR_BASE_URL),
and use a real embedding model instead of the toy one below.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from llama_index.core import SimpleDirectoryReader, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.ingestion import IngestionPipeline

from ovisocr_loader.llama_index import OvisNodeParser, OvisReader
from ovisocr_loader.testing import Simulator, make_pdf, next_page_id, page_image

PAGES = [
    "# Inspection report\n\nThe north quay was inspected on 4 March.",
    "<table><tr><th>Item</th><th>State</th></tr><tr><td>Bollards</td><td>worn</td></tr>"
    "</table>",
]


def main() -> None:
    with Simulator() as sim, tempfile.TemporaryDirectory() as folder:
        ids = [next_page_id() for _ in PAGES]
        for pid, markdown in zip(ids, PAGES, strict=True):
            sim.register(pid, markdown)
        Path(folder, "inspection.pdf").write_bytes(make_pdf([page_image(i) for i in ids]))

        reader = OvisReader(base_url=sim.base_url, concurrency=32)
        docs = SimpleDirectoryReader(folder, file_extractor={".pdf": reader}).load_data()
        for doc in docs:
            print(doc.id_, doc.metadata["page_label"], repr(doc.text[:40]))

        embed = MockEmbedding(embed_dim=8)   # replace with a real embedding model
        nodes = IngestionPipeline(transformations=[OvisNodeParser(), embed]).run(
            documents=docs)
        for node in nodes:
            print(node.metadata["page_numbers"], node.metadata["header_path"], repr(node.text))
        index = VectorStoreIndex(nodes, embed_model=embed)
        print(len(index.as_retriever(similarity_top_k=1).retrieve("bollards")), "hit")


if __name__ == "__main__":
    main()
