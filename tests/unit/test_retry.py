import random

import pytest

from ovisocr_loader.client.retry import next_delay, parse_retry_after, should_retry
from ovisocr_loader.config import RetryPolicy
from ovisocr_loader.errors import (
    FirstTokenTimeout,
    ServerConnectionError,
    ServerProtocolError,
    ServerStatusError,
    SourceError,
)

POLICY = RetryPolicy()


@pytest.mark.parametrize(("status", "retried"), [
    (408, True), (429, True), (500, True), (502, True), (503, True), (504, True),
    (400, False), (401, False), (404, False), (413, False), (422, False),
])
def test_which_statuses_are_retried(status, retried):
    assert should_retry(ServerStatusError("x", status_code=status), POLICY) is retried


def test_transport_failures_are_retried_but_bad_input_is_not():
    assert should_retry(ServerConnectionError("reset"), POLICY)
    assert should_retry(ServerProtocolError("bad json"), POLICY)
    assert should_retry(FirstTokenTimeout("slow"), POLICY)
    assert not should_retry(SourceError("corrupt"), POLICY)


@pytest.mark.parametrize(("attempt", "ceiling"), [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0),
                                                  (5, 8.0), (9, 8.0)])
def test_backoff_is_exponential_jittered_and_capped(attempt, ceiling):
    rng = random.Random(0)
    delays = [next_delay(attempt, POLICY, None, rng) for _ in range(200)]
    assert max(delays) <= ceiling
    assert min(delays) >= 0
    assert max(delays) > ceiling * 0.8  # full jitter reaches near the ceiling


def test_retry_after_wins_and_is_capped():
    assert next_delay(1, POLICY, 3.0) == 3.0
    assert next_delay(1, POLICY, 3600.0) == POLICY.max_retry_after


@pytest.mark.parametrize(("header", "expected"), [
    ("2", 2.0), (" 0.5 ", 0.5), ("-3", 0.0), (None, None), ("", None), ("soon", None),
    ("Wed, 21 Oct 2015 07:28:10 GMT", 10.0),
])
def test_parse_retry_after(header, expected):
    now = 1445412480.0  # 07:28:00 GMT that day
    assert parse_retry_after(header, now=now) == expected
