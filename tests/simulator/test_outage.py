"""A server that goes away mid-run: the run waits for it instead of burning retries."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from ovisocr_loader import HealthPolicy, OvisParser, RetryPolicy
from ovisocr_loader.testing import HttpError, LatencyModel, PageScript, Simulator, marked_pdf

FAST_RETRY = RetryPolicy(base_delay=0.01, max_delay=0.05)
FAST_HEALTH = HealthPolicy(cooldown=0.2, max_cooldown=0.5, poll_interval=0.05)


def _restart_after(sim: Simulator, finished: int, down_for: float) -> threading.Thread:
    """Stop the simulator once ``finished`` pages are done; start it on the same port."""
    def run() -> None:
        Simulator.wait_until(lambda: sum(r.finish_reason == "stop"
                                         for r in sim.completions()) >= finished, 30)
        sim.stop()
        time.sleep(down_for)
        sim.start()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_restart_mid_run_loses_no_page():
    pdf, _ = marked_pdf(40)
    with Simulator(latency=LatencyModel(speed=20)) as sim:
        port = sim.port
        restart = _restart_after(sim, finished=10, down_for=2.0)
        doc = OvisParser(base_url=sim.base_url, retry=FAST_RETRY, health=FAST_HEALTH,
                         concurrency=8, server_wait=30).parse(pdf)
        restart.join(10)
        assert sim.port == port
    assert [p.error for p in doc.pages] == [None] * 40
    assert all(p.markdown for p in doc.pages)
    # pages in flight when the server went away were retried without being given up
    assert any(a.finish_reason == "error" for p in doc.pages for a in p.attempts)


def test_an_outage_longer_than_server_wait_records_every_remaining_page_quickly():
    pdf, _ = marked_pdf(30)
    with Simulator(latency=LatencyModel(speed=20)) as sim:
        def stop_for_good() -> None:
            Simulator.wait_until(lambda: sum(r.finish_reason == "stop"
                                             for r in sim.completions()) >= 5, 30)
            sim.stop()

        threading.Thread(target=stop_for_good, daemon=True).start()
        started = time.monotonic()
        doc = OvisParser(base_url=sim.base_url, retry=FAST_RETRY, health=FAST_HEALTH,
                         concurrency=1, server_wait=1.5).parse(pdf)
        elapsed = time.monotonic() - started
    failed = [p for p in doc.pages if p.error is not None]
    assert len(failed) + sum(1 for p in doc.pages if p.markdown) == 30
    assert len(failed) >= 20
    assert {p.error.kind for p in failed} == {"ServerUnreachableError"}
    assert len({p.error.message for p in failed}) == 1
    assert "server_wait" in failed[0].error.message
    # waited once (1.5 s), then failed the rest together; one page after another
    # waiting its own 1.5 s would take 20 x 1.5 = 30 s or more
    assert elapsed < 30


def test_a_page_that_always_fails_alone_is_its_own_error():
    pdf, ids = marked_pdf(12)
    with Simulator(latency=LatencyModel(speed=50)) as sim:
        sim.register(ids[5], PageScript("never", faults={n: HttpError(500) for n in range(1, 20)}))
        doc = OvisParser(base_url=sim.base_url, retry=FAST_RETRY, health=FAST_HEALTH,
                         concurrency=4, server_wait=30).parse(pdf)
        tries = len(sim.for_page(ids[5]))
    assert [p.page_number for p in doc.pages if p.error is not None] == [6]
    assert doc.pages[5].error.kind == "ServerStatusError"
    assert tries <= FAST_RETRY.max_attempts + 2


def test_pages_the_server_always_rejects_never_take_it_out(caplog: pytest.LogCaptureFixture):
    pdf, ids = marked_pdf(40)
    sick = ids[:3] + ids[20:22]   # sent first, before any page has proved the server alive
    with Simulator(latency=LatencyModel(speed=50)) as sim, \
            caplog.at_level(logging.WARNING, logger="ovisocr_loader"):
        for page_id in sick:
            sim.register(page_id, PageScript("never", faults={
                n: HttpError(500, message="image rejected") for n in range(1, 20)}))
        doc = OvisParser(base_url=sim.base_url, retry=FAST_RETRY, health=FAST_HEALTH,
                         concurrency=16, server_wait=30).parse(pdf)
        probes = [r for r in sim.requests if r.path.endswith("/models")]
    failed = [p.page_number for p in doc.pages if p.error is not None]
    assert failed == [1, 2, 3, 21, 22]
    assert all(doc.pages[n - 1].error.kind == "ServerStatusError" for n in failed)
    assert not [r.getMessage() for r in caplog.records
                if "taken out" in r.getMessage() or "lost the" in r.getMessage()]
    assert len(probes) == 1   # the first check only: the endpoint was never probed again


def test_a_gateway_answering_503_to_everything_is_an_outage(caplog: pytest.LogCaptureFixture):
    pdf, ids = marked_pdf(6)
    with Simulator(latency=LatencyModel(speed=50)) as sim, \
            caplog.at_level(logging.WARNING, logger="ovisocr_loader"):
        for page_id in ids:
            sim.register(page_id, PageScript("never", faults={
                n: HttpError(503) for n in range(1, 40)}))
        doc = OvisParser(base_url=sim.base_url, retry=FAST_RETRY, health=FAST_HEALTH,
                         concurrency=4, server_wait=30).parse(pdf)
    assert all(p.error is not None for p in doc.pages)
    assert any("lost the OvisOCR2 server" in r.getMessage() for r in caplog.records)
