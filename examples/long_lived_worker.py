"""Long-lived workers: each opens its parser once and parses page ranges from a queue.

    python examples/long_lived_worker.py

The shape of a queue consumer or a Ray actor (``ovisocr_loader.ray`` runs this
way): ``share(workers)`` gives each worker its part of the in-flight limit, and
``async with`` keeps its connections, adaptive limit and cache open across ranges.
With a real server, drop the simulator and pass base_url= (or set OVISOCR_BASE_URL).
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from ovisocr_loader import DocumentJob, OvisParser
from ovisocr_loader.testing import Simulator, marked_pdf

WORKERS = 2


async def worker(parser: OvisParser, queue: asyncio.Queue[DocumentJob | None],
                 done: list[str]) -> None:
    async with parser:
        while (job := await queue.get()) is not None:
            async for doc in parser.aparse_many([job]):
                numbers = [p.page_number for p in doc.pages]
                done.append(f"{Path(doc.source).name} pages {numbers}: flags {doc.flags}")


async def main(path: Path, base_url: str) -> list[str]:
    queue: asyncio.Queue[DocumentJob | None] = asyncio.Queue()
    for first in (1, 4):                       # two ranges of three pages
        queue.put_nowait(DocumentJob(str(path), pages=range(first, first + 3)))
    for _ in range(WORKERS):
        queue.put_nowait(None)                 # one stop sign per worker
    shared = OvisParser(base_url=base_url, concurrency=8)
    parsers = [shared.share(WORKERS) for _ in range(WORKERS)]
    print("each worker's limit:", [p.settings.concurrency for p in parsers])
    done: list[str] = []
    await asyncio.gather(*(worker(p, queue, done) for p in parsers))
    return sorted(done)


if __name__ == "__main__":
    pdf, ids = marked_pdf(6)
    with Simulator() as sim, tempfile.TemporaryDirectory() as folder:
        for number, page_id in enumerate(ids, 1):
            sim.register(page_id, f"# Page {number}\n\nText of page {number}.")
        scan = Path(folder) / "scan.pdf"
        scan.write_bytes(pdf)
        for line in asyncio.run(main(scan, sim.base_url)):
            print(line)
