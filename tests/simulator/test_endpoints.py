"""Several endpoints: least-outstanding routing, taking dead ones out, bringing them back."""

from __future__ import annotations

import logging
import socket
import threading

import pytest

from ovisocr_loader import HealthPolicy, OvisParser, ServerUnreachableError
from ovisocr_loader.testing import LatencyModel, Simulator, marked_pdf

FAST_HEALTH = HealthPolicy(max_failures=2, cooldown=0.3, max_cooldown=1.0, wait_for_any=10,
                           poll_interval=0.05)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_requests_spread_over_two_endpoints_by_outstanding_count():
    with Simulator(latency=LatencyModel(speed=10)) as a, \
            Simulator(latency=LatencyModel(speed=10)) as b:
        pdf, _ = marked_pdf(40)
        doc = OvisParser(base_url=[a.base_url, b.base_url], concurrency=8).parse(pdf)
        served = (len(a.completions()), len(b.completions()))
        assert a.max_in_flight + b.max_in_flight <= 8 + 1   # counts are sampled per server
        assert a.max_in_flight <= 5 and b.max_in_flight <= 5
    assert all(p.ok for p in doc.pages) and len(doc.pages) == 40
    assert sum(served) == 40 and min(served) >= 16
    assert {a.endpoint for p in doc.pages for a in p.attempts} == {a.base_url, b.base_url}


def test_an_endpoint_that_does_not_answer_is_taken_out(caplog: pytest.LogCaptureFixture):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with Simulator() as live, caplog.at_level(logging.WARNING, logger="ovisocr_loader"):
        pdf, _ = marked_pdf(6)
        doc = OvisParser(base_url=[dead, live.base_url], health=FAST_HEALTH).parse(pdf)
        assert len(live.completions()) == 6
    assert all(p.ok for p in doc.pages)
    assert any(f"endpoint {dead} taken out" in r.getMessage() for r in caplog.records)


def test_an_endpoint_dying_mid_run_loses_no_page():
    with Simulator(latency=LatencyModel(speed=3)) as a, \
            Simulator(latency=LatencyModel(speed=3)) as b:
        pdf, _ = marked_pdf(30)
        killer = threading.Timer(0.8, a.stop)
        killer.start()
        doc = OvisParser(base_url=[a.base_url, b.base_url], concurrency=8,
                         health=FAST_HEALTH).parse(pdf)
        killer.join()
    assert all(p.ok for p in doc.pages), [p.error for p in doc.pages if p.error]
    failed = [t for p in doc.pages for t in p.attempts if t.error]
    assert failed and {t.endpoint for t in failed} == {a.base_url}   # only the dead one failed
    assert len(b.completions()) >= 15


def test_a_taken_out_endpoint_is_probed_again_and_used():
    port = free_port()
    late = Simulator(port=port, latency=LatencyModel(speed=3))
    with Simulator(latency=LatencyModel(speed=3)) as early:
        pdf, _ = marked_pdf(40)
        starter = threading.Timer(0.5, late.start)
        starter.start()
        try:
            doc = OvisParser(base_url=[f"http://127.0.0.1:{port}/v1", early.base_url],
                             concurrency=8, health=FAST_HEALTH).parse(pdf)
        finally:
            starter.join()
            late.stop()
    assert all(p.ok for p in doc.pages)
    assert len(late.completions()) >= 5        # back in rotation after its probe succeeded


def test_all_endpoints_dead_fails_fast_naming_them():
    urls = [f"http://127.0.0.1:{free_port()}/v1" for _ in range(2)]
    with pytest.raises(ServerUnreachableError, match="none of the endpoints answered") as info:
        OvisParser(base_url=urls).parse(marked_pdf(1)[0])
    assert urls[0] in str(info.value) and urls[1] in str(info.value)
