"""Endpoint choice and health decisions (pure)."""

from __future__ import annotations

import asyncio

import pytest

from ovisocr_loader.client.endpoints import Endpoint, EndpointPool, hurts_health, pick
from ovisocr_loader.client.transport import Transport
from ovisocr_loader.config import HealthPolicy, Timeouts
from ovisocr_loader.errors import (
    FirstTokenTimeout,
    ServerConnectionError,
    ServerProtocolError,
    ServerStatusError,
    ServerUnreachableError,
)


def endpoints(*loads: tuple[int, int, bool]) -> list[Endpoint]:
    out = []
    for n, (outstanding, served, up) in enumerate(loads):
        e = Endpoint(Transport(f"http://gpu{n}:8000/v1", None, Timeouts()),
                     outstanding=outstanding, served=served)
        e.down_until = None if up else 99.0
        out.append(e)
    return out


@pytest.mark.parametrize(("loads", "chosen"), [
    (((3, 10, True), (1, 10, True)), 1),           # fewest outstanding
    (((2, 10, True), (2, 4, True)), 1),            # tie: fewest served
    (((0, 0, False), (9, 50, True)), 1),           # an endpoint that is out is never chosen
    (((5, 5, True),), 0),
])
def test_pick_least_outstanding_up_endpoint(loads, chosen):
    eps = endpoints(*loads)
    assert pick(eps) is eps[chosen]


def test_pick_avoids_the_endpoint_that_just_failed_unless_it_is_the_only_one():
    eps = endpoints((0, 0, True), (5, 5, True))
    assert pick(eps, avoid=eps[0]) is eps[1]
    lone = endpoints((0, 0, True))
    assert pick(lone, avoid=lone[0]) is lone[0]
    assert pick(endpoints((0, 0, False))) is None


@pytest.mark.parametrize(("error", "hurts"), [
    (ServerConnectionError("reset"), True),
    (ServerUnreachableError("refused"), True),
    (FirstTokenTimeout("slow"), True),
    (ServerStatusError("HTTP 503", status_code=503), True),    # a gateway: server away
    (ServerStatusError("HTTP 502", status_code=502), True),
    (ServerStatusError("HTTP 500", status_code=500), False),   # about one request (a page)
    (ServerStatusError("HTTP 429", status_code=429), False),   # busy, not ill
    (ServerStatusError("HTTP 400", status_code=400), False),   # our request, not the server
    (ServerProtocolError("bad SSE"), False),
])
def test_which_failures_count_against_an_endpoint(error, hurts):
    assert hurts_health(error) is hurts


def test_a_first_token_is_a_sign_of_life_that_resets_the_failure_count():
    async def scenario() -> list[bool]:
        pool = EndpointPool([Transport("http://gpu0:8000/v1", None, Timeouts())],
                            HealthPolicy(max_failures=3))
        (endpoint,) = pool.endpoints
        seen = []
        for _ in range(2):
            pool.failed(endpoint, ServerConnectionError("reset"))
        loop = asyncio.get_running_loop()
        pool.alive(endpoint, loop.time() + 0.001)   # a newer request's first token arrived
        for _ in range(2):
            pool.failed(endpoint, ServerConnectionError("reset"))
        seen.append(endpoint.up)
        pool.failed(endpoint, ServerConnectionError("reset"))   # three in a row now
        seen.append(endpoint.up)
        await pool.aclose()
        return seen

    assert asyncio.run(scenario()) == [True, False]


def test_tokens_of_a_request_sent_before_the_failures_are_no_sign_of_life():
    """A stream read from the socket's buffer after the server went away must not
    keep the endpoint in while new connections are refused (a page then used up its
    attempts before the outage was seen, in a CI run of test_outage)."""
    async def scenario() -> list[bool]:
        pool = EndpointPool([Transport("http://gpu0:8000/v1", None, Timeouts())],
                            HealthPolicy(max_failures=3))
        (endpoint,) = pool.endpoints
        sent = asyncio.get_running_loop().time() - 1.0   # before any failure
        seen = []
        for _ in range(2):
            pool.failed(endpoint, ServerConnectionError("refused"))
            pool.alive(endpoint, sent)
            pool.succeeded(endpoint, sent)
        seen.append(endpoint.up)
        pool.failed(endpoint, ServerConnectionError("refused"))   # the third counts
        seen.append(endpoint.up)
        await pool.aclose()
        return seen

    assert asyncio.run(scenario()) == [True, False]
