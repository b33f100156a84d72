"""The loop guard end to end: early abort, penalized retry, long pages, trimming."""

from __future__ import annotations

import pytest

from ovisocr_loader import OvisParser, RetryPolicy
from ovisocr_loader.testing import (
    Hang,
    LatencyModel,
    PageScript,
    Simulator,
    long_markdown,
    marked_pdf,
    synthetic_markdown,
    tokenize,
)

CLEAN = synthetic_markdown(b"invoice", 200)


@pytest.fixture
def sim():
    # 5x field speed: fast tests, yet slow enough that an abort visibly saves tokens
    with Simulator(latency=LatencyModel(speed=5.0)) as simulator:
        yield simulator


#: a looping answer stalls after this many tokens: the guard must have closed it by then
STALL_AFTER = 1000


def _parser_for_stalls(sim: Simulator) -> OvisParser:
    """A parser for which a stream the guard missed fails in a minute (not 900 s x 4)."""
    return OvisParser(base_url=sim.base_url, page_timeout=60, retry=RetryPolicy(max_attempts=1))


@pytest.mark.parametrize("kind", ["digits", "o", "emoji", "think"])
def test_looping_page_is_aborted_early_and_healed_by_the_penalized_retry(sim, kind):
    """The loop stalls after STALL_AFTER tokens (far below the 4,096 cap): only a guard that
    aborts on the degenerate tail before then gets a loop retry; without it the stalled
    stream would end in a timeout. An event, not a race between client and server."""
    pdf, (pid,) = marked_pdf(1)
    sim.register(pid, CLEAN, loop=kind, faults={1: Hang(after_tokens=STALL_AFTER)})
    page = _parser_for_stalls(sim).parse(pdf).pages[0]
    first, retry = sim.for_page(pid)
    assert "frequency_penalty" not in first.body          # the first pass is never penalized
    assert sim.wait_until(lambda: first.disconnected)
    assert first.finish_reason is None
    assert retry.body["frequency_penalty"] == 0.3
    assert retry.body["max_tokens"] == 4096
    assert page.markdown == CLEAN and not page.loop_trimmed
    assert [a.purpose for a in page.attempts] == ["first", "loop_retry"]
    assert page.attempts[0].aborted and page.attempts[0].degenerate is not None


def test_genuinely_long_page_is_retried_with_the_larger_cap_and_no_penalty(sim):
    pdf, (pid,) = marked_pdf(1)
    text = long_markdown(5000)
    sim.register(pid, text)
    page = OvisParser(base_url=sim.base_url).parse(pdf).pages[0]
    first, retry = sim.for_page(pid)
    assert first.finish_reason == "length" and first.tokens_generated == 4096
    assert retry.body["max_tokens"] == 16384 and "frequency_penalty" not in retry.body
    assert retry.finish_reason == "stop"
    assert page.markdown == text and not page.truncated
    assert [a.purpose for a in page.attempts] == ["first", "long_retry"]


def test_retry_that_degenerates_too_keeps_the_longest_clean_prefix(sim):
    pdf, (pid,) = marked_pdf(1)
    sim.register(pid, PageScript(CLEAN, loop="o", loop_after=200, loop_on_retry=True,
                                 faults={1: Hang(after_tokens=STALL_AFTER)}))
    page = _parser_for_stalls(sim).parse(pdf).pages[0]
    assert page.loop_trimmed and page.error is None
    assert page.markdown == CLEAN[:200].rstrip()
    assert " O O" not in page.markdown
    first, retry = sim.for_page(pid)
    assert page.attempts[0].aborted and page.attempts[0].degenerate is not None
    assert sim.wait_until(lambda: first.disconnected)
    assert retry.tokens_generated == 4096 and retry.finish_reason == "length"


def test_think_garbage_on_the_retry_is_cut_at_once(sim):
    pdf, (pid,) = marked_pdf(1)
    stall = Hang(after_tokens=STALL_AFTER)
    sim.register(pid, PageScript(CLEAN, loop="think", loop_on_retry=True,
                                 faults={1: stall, 2: stall}))
    page = _parser_for_stalls(sim).parse(pdf).pages[0]
    assert page.loop_trimmed and "<think>" not in page.markdown and "## 1" not in page.markdown
    assert [(a.aborted, a.degenerate is not None) for a in page.attempts] == [(True, True)] * 2


def test_legitimately_repeated_lines_survive_intact(sim):
    sheet = "# Sign-in sheet\n\n" + "Name: ______________ Signature: ______________\n" * 30
    pdf, (pid,) = marked_pdf(1)
    # the first answer stops short of its end, so only the guard can end it (however
    # slowly this process reads); the retry is the whole sheet, ended by the model
    sim.register(pid, PageScript(sheet, faults={1: Hang(after_tokens=len(tokenize(sheet)))}))
    page = OvisParser(base_url=sim.base_url).parse(pdf).pages[0]
    assert page.markdown == sheet and not page.loop_trimmed
    first, retry = sim.for_page(pid)
    assert page.attempts[0].aborted                 # the guard suspected a loop ...
    assert sim.wait_until(lambda: first.disconnected)
    assert retry.finish_reason == "stop"            # ... the model ended the page itself


def test_server_side_repetition_detection_is_opt_in(sim):
    from ovisocr_loader import GuardPolicy

    pdf, (pid,) = marked_pdf(1)
    OvisParser(base_url=sim.base_url,
               guard=GuardPolicy(server_repetition_detection=True)).parse(pdf)
    assert sim.for_page(pid)[0].body["repetition_detection"] is True
