"""Planning and splitting for Ray, without starting Ray."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("ray", reason="the ray extra is not installed")

from ovisocr_loader import OvisParser
from ovisocr_loader.document import PageErrorInfo, PageResult, ParsedDocument
from ovisocr_loader.elements import parse_page
from ovisocr_loader.integrations.ray_data import (
    ROW_SCHEMA,
    document_rows,
    plan_page_ranges,
    worker_parser,
)
from ovisocr_loader.testing import marked_pdf


def test_a_long_pdf_is_cut_into_ranges_covering_every_page_once(tmp_path: Path) -> None:
    path = tmp_path / "long.pdf"
    path.write_bytes(marked_pdf(37, size=(200, 260))[0])
    ranges = plan_page_ranges({"path": str(path)}, pages_per_task=16)
    assert [r["pages"] for r in ranges] == [list(range(1, 17)), list(range(17, 33)),
                                            list(range(33, 38))]
    selected = plan_page_ranges({"path": str(path)}, pages_per_task=2, pages=[1, 5, 6])
    assert [r["pages"] for r in selected] == [[1, 5], [6]]
    # a missing page fails the file, as in one process: the worker records it per page
    missing = plan_page_ranges({"path": str(path)}, pages_per_task=2, pages=[1, 99])
    assert [r["pages"] for r in missing] == [[1, 99]]


def test_a_file_that_cannot_be_opened_is_one_whole_file_range(tmp_path: Path) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.7 nothing else")
    assert plan_page_ranges({"path": str(path)}) == [{"path": str(path), "pages": None}]


def test_workers_split_the_total_limit() -> None:
    fixed = OvisParser(base_url="http://gpu:8000/v1", concurrency=32)
    assert fixed.share(2).settings.concurrency == 16
    assert fixed.share(3).settings.concurrency == 10
    assert fixed.share(64).settings.concurrency == 1
    assert fixed.settings.concurrency == 32           # sharing made new parsers
    auto = OvisParser(base_url="http://gpu:8000/v1", max_concurrency=256).share(4).settings
    assert (auto.concurrency, auto.adaptive.maximum, auto.adaptive.start) == ("auto", 64, 4)
    worker = worker_parser({"base_url": "http://gpu:8000/v1", "errors": "raise",
                            "render_workers": 3}, 1).settings
    assert (worker.errors, worker.render_workers) == ("record", 0)


def test_rows_carry_every_page_or_the_error_of_each_page_asked_for() -> None:
    doc = ParsedDocument(source="a.pdf", sha256="abc", total_pages=9, model="m", pages=[
        PageResult(page_number=3, markdown="# Hi", rotation=90,
                   elements=parse_page("# Hi", 3)),
        PageResult(page_number=4, error=PageErrorInfo(kind="PageTimeout", message="slow"))])
    rows = document_rows(doc, [3, 4])
    assert [set(r) for r in rows] == [set(ROW_SCHEMA.names)] * 2
    assert [(r["page_number"], r["rotation"], r["error"]) for r in rows] == [
        (3, 90, None), (4, 0, "PageTimeout: slow")]
    assert '"kind": "heading"' in rows[0]["elements"]
    broken = ParsedDocument(source="b.pdf", error=PageErrorInfo(kind="CorruptFileError",
                                                                message="bad xref"))
    assert [(r["page_number"], r["error"]) for r in document_rows(broken, [5, 6])] == [
        (5, "CorruptFileError: bad xref"), (6, "CorruptFileError: bad xref")]
    assert [r["page_number"] for r in document_rows(broken)] == [None]


def test_a_worker_records_a_broken_file_in_its_rows_without_a_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Ray forwards a worker's log lines to the driver, which names every failed row
    itself: the worker's own warning would say each failure twice."""
    import asyncio
    import logging

    import pyarrow as pa

    from ovisocr_loader.integrations.ray_data import OvisBatchParser
    from ovisocr_loader.testing import Simulator

    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7 cut off")
    batch = pa.Table.from_pylist([{"path": str(broken), "pages": None}])

    async def in_a_worker(url: str) -> list[dict[str, object]]:
        worker = OvisBatchParser(base_url=url)
        try:
            return (await worker(batch)).to_pylist()
        finally:
            await worker.parser.__aexit__(None, None, None)

    with Simulator() as sim, caplog.at_level(logging.WARNING, logger="ovisocr_loader"):
        rows = asyncio.run(in_a_worker(sim.base_url))
        assert [str(r["error"]).split(":")[0] for r in rows] == ["CorruptFileError"]
        assert not [r for r in caplog.records if "broken.pdf" in r.getMessage()]
        list(OvisParser(base_url=sim.base_url).parse_many([broken]))
    assert [r for r in caplog.records if "broken.pdf" in r.getMessage()]  # outside a worker


def test_a_worker_dropped_on_its_own_loop_lets_go_of_its_connections(tmp_path: Path) -> None:
    """It cannot wait on that loop for its own closing (that blocked the loop for ten
    seconds and closed nothing): the closing runs on the loop instead."""
    import asyncio
    import gc

    import pyarrow as pa

    from ovisocr_loader.integrations.ray_data import OvisBatchParser
    from ovisocr_loader.testing import Simulator

    pdf, ids = marked_pdf(1)
    (tmp_path / "a.pdf").write_bytes(pdf)
    batch = pa.Table.from_pylist([{"path": str(tmp_path / "a.pdf"), "pages": None}])

    async def drop_a_worker(url: str, sim: Simulator) -> None:
        worker = OvisBatchParser(base_url=url)
        assert (await worker(batch)).to_pylist()[0]["markdown"] == "# Page"
        assert sim.open_connections > 0
        # watched from another thread from now on: the closing takes milliseconds once
        # the loop gives it a turn (blocked on the loop, it waited ten seconds)
        closed = asyncio.ensure_future(
            asyncio.to_thread(sim.wait_until, lambda: sim.open_connections == 0, 5))
        await asyncio.sleep(0)
        del worker
        gc.collect()
        assert await closed

    with Simulator() as sim:
        sim.register(ids[0], "# Page")
        asyncio.run(drop_a_worker(sim.base_url, sim))
