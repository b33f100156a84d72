"""Keep a LangChain vector store in sync with a folder of scans: ``index()`` with a
``SQLRecordManager`` pays OCR and embeddings only for what changed (docs/sync.md).

``OvisLoader`` chunks (``mode="elements"`` with ``chunk_size``) into an embedded Qdrant;
``cleanup="incremental"`` after an edit, ``"full"`` once files were renamed or
deleted. The simulator stands in for the vLLM server; replace the fake embedding.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any, Literal

from langchain_classic.indexes import SQLRecordManager, index
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_qdrant import QdrantVectorStore
from qdrant_client import QdrantClient, models

from ovisocr_loader.langchain import OvisLoader, index_key
from ovisocr_loader.testing import (
    HttpError,
    PageScript,
    Simulator,
    write_scan,
)

EMBEDDED: list[str] = []


class CountingEmbedding(DeterministicFakeEmbedding):
    """A stand-in embedding model that counts the texts it is asked to embed."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        EMBEDDED.extend(texts)
        return super().embed_documents(texts)


def sync(sim: Simulator, scans: Path, store: QdrantVectorStore, records: SQLRecordManager,
         cache: Path, cleanup: Literal["incremental", "full"]) -> dict[str, Any]:
    """One re-sync, as a scheduled job runs it; returns what it cost."""
    sim.reset_records()
    EMBEDDED.clear()
    # the result cache is on by default, in the user cache folder; this example keeps
    # its own, as the simulated pages of one run are not those of another
    loader = OvisLoader(scans, mode="elements", chunk_size=256, base_url=sim.base_url,
                        cache_dir=cache)
    result = index(loader, records, store, cleanup=cleanup, source_id_key="source",
                   key_encoder=index_key)
    return {"sent": len({r.page_id for r in sim.completions()}), "embedded": len(EMBEDDED),
            **result}


def main() -> None:
    with Simulator() as sim, tempfile.TemporaryDirectory() as work:
        scans = Path(work, "scans")
        scans.mkdir()
        client = QdrantClient(path=str(Path(work, "qdrant")))   # embedded, on disk
        client.create_collection("scans", vectors_config=models.VectorParams(
            size=8, distance=models.Distance.COSINE))
        store = QdrantVectorStore(client, "scans", CountingEmbedding(size=8))
        records = SQLRecordManager("ovisocr/scans", db_url=f"sqlite:///{work}/records.db")
        records.create_schema()
        write_scan(sim, scans / "report.pdf", [301, 302, 303, 304])
        write_scan(sim, scans / "memo.pdf", [401, 402])

        def step(name: str, cleanup: Literal["incremental", "full"] = "incremental") -> None:
            cost = sync(sim, scans, store, records, Path(work, "cache"), cleanup)
            print(f"{name}: {cost['sent']} pages sent, {cost['embedded']} texts embedded; "
                  f"added {cost['num_added']}, skipped {cost['num_skipped']}, deleted "
                  f"{cost['num_deleted']}")

        step("first sync")
        step("unchanged")
        write_scan(sim, scans / "report.pdf", [301, 302, 313, 304])   # page 3 rescanned
        step("one page edited")
        write_scan(sim, scans / "report.pdf", [301, 322, 313, 304])   # page 2 rescanned...
        sim.register(322, PageScript("never", faults={1: HttpError(400)}))   # ...and failing
        step("a page that fails")
        write_scan(sim, scans / "report.pdf", [301, 322, 313, 304])   # the server is fixed
        step("it reads now")
        shutil.copy(scans / "memo.pdf", scans / "memo-copy.pdf")
        (scans / "memo.pdf").rename(scans / "memo-2024.pdf")
        step("a file copied, another renamed", cleanup="full")
        client.close()


if __name__ == "__main__":
    main()
