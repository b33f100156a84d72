"""OvisLoader -> RecursiveCharacterTextSplitter -> InMemoryVectorStore, on the simulator.

    pip install -e ".[langchain]" langchain-text-splitters
    python examples/langchain_quickstart.py

With a real server, drop the simulator and pass ``base_url=`` (or set OVISOCR_BASE_URL),
and use a real embedding model instead of the toy one below.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_text_splitters import RecursiveCharacterTextSplitter

from ovisocr_loader.langchain import OvisLoader
from ovisocr_loader.testing import Simulator, make_pdf, next_page_id, page_image

PAGES = [
    "# Customs declaration\n\nShipment of 40 crates of machine parts.",
    "<table><tr><th>Crate</th><th>Weight</th></tr><tr><td>A-1</td><td>120 kg</td></tr>"
    "</table>",
]


async def load_async(loader: OvisLoader) -> list[Document]:
    return [doc async for doc in loader.alazy_load()]


def main() -> None:
    with Simulator() as sim, tempfile.TemporaryDirectory() as folder:
        ids = [next_page_id() for _ in PAGES]
        for pid, markdown in zip(ids, PAGES, strict=True):
            sim.register(pid, markdown)
        Path(folder, "declaration.pdf").write_bytes(make_pdf([page_image(i) for i in ids]))

        loader = OvisLoader(folder, base_url=sim.base_url, concurrency=32)
        docs = asyncio.run(load_async(loader))      # or simply loader.load()
        for doc in docs:
            print(doc.metadata["source"], doc.metadata["page"], repr(doc.page_content[:40]))

        elements = OvisLoader(folder, mode="elements", base_url=sim.base_url).load()
        print([e.metadata["category"] for e in elements])

        chunks = RecursiveCharacterTextSplitter(chunk_size=400).split_documents(docs)
        store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))  # use a real one
        store.add_documents(chunks)
        print(len(store.similarity_search("crate weight", k=1)), "hit")


if __name__ == "__main__":
    main()
