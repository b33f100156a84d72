"""One in-flight limit, page order under concurrency, documents streamed as they finish."""

from __future__ import annotations

import asyncio

from ovisocr_loader import DocumentJob, OvisParser
from ovisocr_loader.testing import LatencyModel, Simulator, marked_pdf, synthetic_markdown


def test_64_pages_at_concurrency_16_keep_12_to_16_in_flight():
    # realistic pages (~600 tokens) at 1.5x field speed (~1.5 s a request): the server, not
    # rendering or the shared CPU of client and simulator, is the limit
    with Simulator(latency=LatencyModel(speed=1.5)) as sim:
        pdf, ids = marked_pdf(64)
        texts = [synthetic_markdown(str(n).encode()) for n in range(1, 65)]
        for pid, text in zip(ids, texts, strict=True):
            sim.register(pid, text)
        doc = OvisParser(base_url=sim.base_url, concurrency=16).parse(pdf)
        assert sim.max_in_flight <= 16
        # most requests started while at least 12 were already in flight
        busy = [r.in_flight_at_start for r in sim.completions()][16:48]
        assert max(r.in_flight_at_start for r in sim.completions()) >= 12
        assert sorted(busy)[len(busy) // 2] >= 12
    assert [p.page_number for p in doc.pages] == list(range(1, 65))
    assert [p.markdown for p in doc.pages] == texts


def test_parse_many_shares_one_limit_and_streams_documents():
    with Simulator(latency=LatencyModel(speed=10.0)) as sim:
        docs = []
        for _ in range(6):
            pdf, ids = marked_pdf(3)
            docs.append((pdf, ids))
        parser = OvisParser(base_url=sim.base_url, concurrency=4)
        jobs = [DocumentJob(pdf, name=f"doc{i}.pdf") for i, (pdf, _) in enumerate(docs)]
        out = list(parser.parse_many(jobs))
        assert sim.max_in_flight <= 4
        assert sim.max_in_flight >= 3
    assert sorted(d.source for d in out) == [f"doc{i}.pdf" for i in range(6)]
    assert all(len(d.pages) == 3 for d in out)


def test_concurrent_aparse_calls_share_the_parser_limit():
    with Simulator(latency=LatencyModel(speed=10.0)) as sim:
        parser = OvisParser(base_url=sim.base_url, concurrency=5)
        files = [marked_pdf(1)[0] for _ in range(20)]

        async def run() -> list[int]:
            docs = await asyncio.gather(*(parser.aparse(f) for f in files))
            return [len(d.pages) for d in docs]

        assert asyncio.run(run()) == [1] * 20
        assert 4 <= sim.max_in_flight <= 5
        assert len(sim.completions()) == 20
        assert sum(r.path == "/v1/models" for r in sim.requests) == 1  # one probe, one session
