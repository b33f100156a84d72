"""How long a stream's socket rests between reads (issue #52)."""

from __future__ import annotations

import asyncio

from ovisocr_loader.client.chat_stream import ReadPacing, StreamPace

ONE_EVENT = b'data: {"choices": [{"delta": {"content": "a"}}]}\n\n'


def test_rest_grows_with_open_streams_up_to_a_bound() -> None:
    pacing = ReadPacing()
    pacing.open = 10
    assert abs(pacing.rest_s() - 0.06) < 1e-9
    pacing.open = 1000
    assert pacing.rest_s() == ReadPacing.MAX_S


def test_rest_is_a_small_share_of_the_time_pages_take() -> None:
    """On a fast server a rest of 6 ms a stream would hold each slot a few per cent
    longer than the page: the page time bounds it."""
    pacing = ReadPacing()
    pacing.open = 32
    pacing.page_ended(1.5)
    assert abs(pacing.rest_s() - 1.5 * ReadPacing.PAGE_SHARE) < 1e-9
    for _ in range(50):   # pages get slower: the bound follows them
        pacing.page_ended(20.0)
    assert pacing.rest_s() == 32 * ReadPacing.PER_STREAM_S


def test_a_stream_whose_reads_bring_one_event_each_is_not_rested() -> None:
    """The server groups tokens itself (--stream-interval): a rest gathers nothing."""
    pacing = ReadPacing()
    pacing.open = 32
    sparse, busy = StreamPace(pacing, 0.0), StreamPace(pacing, 0.0)
    rests = [sparse.after_read(ONE_EVENT) for _ in range(ReadPacing.TRIAL_READS + 3)]
    assert all(r > 0 for r in rests[:ReadPacing.TRIAL_READS])
    assert rests[-1] == 0.0
    assert all(busy.after_read(ONE_EVENT * 8) > 0 for _ in range(20))
    crlf = StreamPace(pacing, 0.0)   # events ended by CRLF pairs are counted alike
    assert all(crlf.after_read(ONE_EVENT.replace(b"\n", b"\r\n") * 8) > 0 for _ in range(20))


def test_only_a_stream_that_ended_on_its_own_counts_as_a_page() -> None:
    async def run() -> ReadPacing:
        pacing = ReadPacing()
        with pacing.stream() as aborted:
            assert pacing.open == 1
            assert not aborted.ended
        assert pacing.page_s is None and pacing.open == 0
        with pacing.stream() as finished:
            finished.ended = True
        return pacing

    pacing = asyncio.run(run())
    assert pacing.page_s is not None and pacing.page_s >= 0.0
