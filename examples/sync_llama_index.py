"""Keep a LlamaIndex index in sync with a folder of scans: each re-sync pays OCR and
embeddings only for what changed (docs/sync.md).

An ``IngestionPipeline`` with a docstore (``UPSERTS_AND_DELETE``) over an embedded
Qdrant, fed by ``SimpleDirectoryReader`` + ``OvisReader``, run as a daily job would
run it: a new pipeline each time, loaded from and saved to disk. The simulator stands
in for the vLLM server; replace ``MockEmbedding`` with a real model.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from llama_index.core import SimpleDirectoryReader
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.ingestion import DocstoreStrategy, IngestionPipeline
from llama_index.core.storage.docstore import SimpleDocumentStore
from llama_index.vector_stores.qdrant import QdrantVectorStore
from qdrant_client import QdrantClient

from ovisocr_loader.llama_index import OvisNodeParser, OvisReader
from ovisocr_loader.testing import (
    HttpError,
    PageScript,
    Simulator,
    write_scan,
)

EMBEDDED: list[str] = []


class CountingEmbedding(MockEmbedding):
    """A stand-in embedding model that counts the texts it is asked to embed."""

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        EMBEDDED.extend(texts)
        return super()._get_text_embeddings(texts)


def sync(sim: Simulator, scans: Path, storage: Path, client: QdrantClient, cache: Path
         ) -> dict[str, Any]:
    """One re-sync, as a scheduled job runs it; returns what it cost."""
    sim.reset_records()
    EMBEDDED.clear()
    pipeline = IngestionPipeline(
        transformations=[OvisNodeParser(chunk_size=256), CountingEmbedding(embed_dim=8)],
        docstore=SimpleDocumentStore(),
        vector_store=QdrantVectorStore(client=client, collection_name="scans"),
        docstore_strategy=DocstoreStrategy.UPSERTS_AND_DELETE)
    if storage.exists():
        pipeline.load(str(storage))
    # the result cache is on by default, in the user cache folder; this example keeps
    # its own, as the simulated pages of one run are not those of another
    reader = OvisReader(base_url=sim.base_url, cache_dir=cache)
    docs = SimpleDirectoryReader(str(scans), file_extractor={".pdf": reader}).load_data()
    pipeline.run(documents=docs)
    pipeline.persist(str(storage))
    return {"sent": len({r.page_id for r in sim.completions()}), "embedded": len(EMBEDDED),
            "documents": len(pipeline.docstore.get_all_document_hashes())}


def main() -> None:
    with Simulator() as sim, tempfile.TemporaryDirectory() as work:
        scans, storage = Path(work, "scans"), Path(work, "pipeline")
        scans.mkdir()
        client = QdrantClient(path=str(Path(work, "qdrant")))   # embedded, on disk
        write_scan(sim, scans / "report.pdf", [101, 102, 103, 104])
        write_scan(sim, scans / "memo.pdf", [201, 202])

        def step(name: str) -> None:
            cost = sync(sim, scans, storage, client, Path(work, "cache"))
            print(f"{name}: {cost['sent']} pages sent, {cost['embedded']} texts embedded, "
                  f"{cost['documents']} page documents")

        step("first sync")
        step("unchanged")
        write_scan(sim, scans / "report.pdf", [101, 102, 113, 104])   # page 3 rescanned
        step("one page edited")
        write_scan(sim, scans / "report.pdf", [101, 122, 113, 104])   # page 2 rescanned...
        sim.register(122, PageScript("never", faults={1: HttpError(400)}))   # ...and failing
        step("a page that fails")
        write_scan(sim, scans / "report.pdf", [101, 122, 113, 104])   # the server is fixed
        step("it reads now")
        shutil.copy(scans / "memo.pdf", scans / "memo-copy.pdf")
        step("a file copied")
        step("unchanged again")
        (scans / "memo.pdf").rename(scans / "memo-2024.pdf")
        step("a file renamed")
        (scans / "memo-copy.pdf").unlink()
        step("a file deleted")
        client.close()


if __name__ == "__main__":
    main()
