"""OvisParser as a long-lived worker: held open across calls, shared between workers."""

from __future__ import annotations

import asyncio

from ovisocr_loader import DocumentJob, OvisParser
from ovisocr_loader.testing import Simulator, marked_pdf


def probes(sim: Simulator) -> int:
    return sum(1 for r in sim.requests if r.path == "/v1/models")


def test_a_held_parser_keeps_one_session_across_calls(ovis_simulator: Simulator):
    pdf, _ = marked_pdf(4)
    parser = OvisParser(base_url=ovis_simulator.base_url, concurrency=4)

    async def ranges(held: bool) -> list[list[int]]:
        numbers = []
        if held:
            await parser.__aenter__()
        for pages in ([1, 2], [3, 4]):
            async for doc in parser.aparse_many([DocumentJob(pdf, pages=pages)]):
                numbers.append([p.page_number for p in doc.pages])
        if held:
            assert parser.concurrency_now == 4      # still open between and after calls
            await parser.aclose()
        assert parser.concurrency_now is None       # closed once nobody holds it
        return numbers

    assert asyncio.run(ranges(held=False)) == [[1, 2], [3, 4]]
    assert probes(ovis_simulator) == 2              # each call opened its own session
    ovis_simulator.reset_records()
    assert asyncio.run(ranges(held=True)) == [[1, 2], [3, 4]]
    assert probes(ovis_simulator) == 1              # one session for the worker's life


def test_shared_parsers_split_the_limit_and_keep_the_options():
    parser = OvisParser(base_url="http://gpu:8000/v1", concurrency=10, dpi=200)
    parts = [parser.share(3) for _ in range(3)]
    assert [p.settings.concurrency for p in parts] == [3, 3, 3]
    assert all(p.options == parser.options for p in parts)
    assert all(p.settings.render.dpi == 200 for p in parts)
