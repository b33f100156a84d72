"""Adaptive concurrency: the controller's decisions (a pure function of observations),
vLLM /metrics parsing, and the variable limiter."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from ovisocr_loader.client.adaptive import (
    AdaptivePolicy,
    ControllerState,
    Observation,
    decide,
    elbow,
)
from ovisocr_loader.client.limiter import Limiter
from ovisocr_loader.client.metrics import ServerLoad, metrics_url, parse_metrics

POLICY = AdaptivePolicy()


def window(limit: int, pages_per_min: float, *, load: ServerLoad | None = None,
           in_flight: float | None = None, preempted: float = 0.0) -> Observation:
    return Observation(limit=limit, seconds=6.0, completed=round(pages_per_min / 10),
                       in_flight=limit if in_flight is None else in_flight, load=load,
                       preempted=preempted)


def run(curve, steps: int = 30, load=None) -> list[int]:
    """Drive the controller against a throughput curve; the limits it chose."""
    state = ControllerState(POLICY.start)
    limits = []
    for _ in range(steps):
        obs = window(state.limit, curve(state.limit), load=load(state.limit) if load else None)
        limits.append(decide(state, obs, POLICY).limit)
    return limits


def peaked(elbow_at: int, best: float):
    return lambda n: best * min(n, elbow_at) / elbow_at * (1 - 0.002 * max(0, n - elbow_at))


@pytest.mark.parametrize("elbow_at", [12, 32, 128])
def test_slow_start_finds_the_elbow_without_metrics(elbow_at: int):
    limits = run(peaked(elbow_at, 600))
    settled = limits[-10:]
    assert all(0.75 * elbow_at <= n <= 1.5 * elbow_at + POLICY.probe_step for n in settled)
    assert max(limits) <= POLICY.maximum


def test_no_wild_oscillation_once_settled():
    limits = run(peaked(32, 590), steps=40)[-20:]
    changes = sum(1 for a, b in itertools.pairwise(limits) if a != b)
    assert changes <= 12 and max(limits) - min(limits) <= 12


@pytest.mark.parametrize(("load", "why", "limit"), [
    (ServerLoad(running=40, waiting=6), "waiting", 34),      # our share of the queue off
    (ServerLoad(running=8, waiting=2), "waiting", 32),       # two, on a small server
    (ServerLoad(running=10, waiting=30), "waiting", 10),     # the server runs a quarter
])
def test_server_pressure_backs_off(load: ServerLoad, why: str, limit: int):
    state = ControllerState(40)
    decision = decide(state, window(40, 500, load=load), POLICY)
    assert decision.limit == limit and why in decision.reason
    thrashing = decide(ControllerState(40), window(40, 500, load=ServerLoad(30, 0),
                                                   preempted=60), POLICY)
    assert thrashing.limit == 30 and "preemptions" in thrashing.reason


@pytest.mark.parametrize("load, preempted", [
    (ServerLoad(running=40, waiting=1), 0.0),      # one request between scheduler steps
    (ServerLoad(running=60, waiting=3), 0.0),      # under a tenth of those running
    (ServerLoad(running=40, waiting=0), 5.0),      # a few preemptions for 50 pages
    (ServerLoad(running=40, waiting=0, kv_usage=0.98), 0.0),   # a full cache, no thrash
])
def test_what_a_busy_server_shows_at_its_elbow_is_no_pressure(load: ServerLoad,
                                                               preempted: float):
    state = ControllerState(40, settled=True, rates={40: 500 / 60})
    decision = decide(state, window(40, 500, load=load, preempted=preempted), POLICY)
    assert decision.limit == 40 and "back off" not in decision.reason


@pytest.mark.parametrize(("kv_usage", "running", "grown"), [
    (None, 16, 32),     # no KV reading: doubles
    (0.05, 16, 48),     # room for many more: three times at most
    (0.3, 16, 48),      # room for three times as many
    (0.6, 16, 24),      # doubling would overfill it: up to 90%
    (0.3, 8, 24),       # it runs 8 of our 16: all 16 would fill 60%, so 1.5 times
])
def test_slow_start_grows_as_far_as_the_kv_cache_has_room(kv_usage, running, grown):
    load = ServerLoad(running, 0, kv_usage=kv_usage)
    decision = decide(ControllerState(16), window(16, 300, load=load), POLICY)
    assert decision.limit == grown and "grow" in decision.reason


def test_slow_start_stops_at_a_full_kv_cache():
    state = ControllerState(16)
    first = decide(state, window(16, 300, load=ServerLoad(16, 0, kv_usage=0.45)), POLICY)
    assert first.limit == 32 and "grow" in first.reason
    full = decide(state, window(32, 500, load=ServerLoad(32, 0, kv_usage=0.95)), POLICY)
    assert full.limit == 32 and "KV cache 95% full" in full.reason and state.settled


def test_under_pressure_the_client_holding_most_of_the_server_backs_off_most():
    crowded = ServerLoad(running=120, waiting=30, kv_usage=0.8)
    most = ControllerState(96, settled=True, rates={96: 10.0})
    assert decide(most, window(96, 600, load=crowded), POLICY).limit == 76  # its 4/5 kept
    tenth = ControllerState(16)
    assert decide(tenth, window(16, 100, load=crowded), POLICY).limit == 16
    assert not tenth.settled        # a newcomer's slow start goes on


def test_a_limit_that_is_not_binding_teaches_nothing():
    state = ControllerState(32)
    decision = decide(state, window(32, 100, in_flight=5), POLICY)
    assert decision.limit == 32 and "fewer pages" in decision.reason
    assert state.rates == {}


def test_limits_stay_within_the_bounds():
    tight = AdaptivePolicy(minimum=4, maximum=20)
    state = ControllerState(16)
    assert decide(state, window(16, 600), tight).limit == 20
    state = ControllerState(5)
    squeeze = ServerLoad(running=5, waiting=9)
    assert decide(state, window(5, 100, load=squeeze), tight).limit == 4


def test_elbow_is_the_lowest_limit_near_the_best():
    state = ControllerState(32, rates={16: 7.0, 24: 9.5, 32: 9.8, 48: 9.9})
    assert elbow(state, POLICY) == 32


VLLM_METRICS = """# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="ATH-MaaS/OvisOCR2"} 31.0
vllm:num_requests_running{engine="1",model_name="ATH-MaaS/OvisOCR2"} 2.0
vllm:num_requests_waiting{engine="0",model_name="ATH-MaaS/OvisOCR2"} 4.0
vllm:kv_cache_usage_perc{engine="0",model_name="ATH-MaaS/OvisOCR2"} 0.87
vllm:kv_cache_usage_perc{engine="1",model_name="ATH-MaaS/OvisOCR2"} 0.45
vllm:num_preemptions_total{engine="0",model_name="ATH-MaaS/OvisOCR2"} 12.0
vllm:generation_tokens_total{engine="0",model_name="ATH-MaaS/OvisOCR2"} 1.5e+06
vllm:time_to_first_token_seconds_bucket{le="0.5",model_name="x"} 3.0
python_gc_objects_collected_total{generation="0"} 1234.0
"""


def test_vllm_metrics_are_parsed_and_summed_over_engines():
    """Counts add up over a data-parallel server's engines; the KV-cache usage, a
    fraction per engine, is their mean (two engines half full are not one full)."""
    load = parse_metrics(VLLM_METRICS)
    assert load == ServerLoad(running=33.0, waiting=4.0, kv_usage=pytest.approx(0.66),
                              preemptions=12.0, generation_tokens=1.5e6)


def test_the_retired_cache_gauge_and_missing_metrics():
    old = parse_metrics("vllm:num_requests_running 3\nvllm:gpu_cache_usage_perc 0.5\n")
    assert old is not None and old.kv_usage == 0.5 and old.waiting == 0.0
    assert parse_metrics("<html>login</html>") is None
    assert parse_metrics("python_info 1\n") is None
    assert parse_metrics("vllm:num_requests_running NaN\nvllm:num_requests_waiting 1\n") == \
        ServerLoad(running=0.0, waiting=1.0)
    assert metrics_url("http://gpu:8000/v1") == "http://gpu:8000/metrics"


def test_the_limiter_follows_a_changing_limit():
    async def scenario() -> list[int]:
        limiter = Limiter(2)
        seen: list[int] = []
        release = asyncio.Event()

        async def worker() -> None:
            async with limiter:
                seen.append(limiter.in_flight)
                await release.wait()

        tasks = [asyncio.create_task(worker()) for _ in range(6)]
        await asyncio.sleep(0.01)
        first = limiter.in_flight
        limiter.set_limit(5)
        await asyncio.sleep(0.01)
        raised = limiter.in_flight
        limiter.set_limit(1)
        release.set()
        await asyncio.gather(*tasks)
        return [first, raised, limiter.in_flight, max(seen)]

    assert asyncio.run(scenario()) == [2, 5, 0, 5]


def test_a_full_cache_shared_with_another_client_makes_the_bigger_one_yield():
    incumbent = ControllerState(120, settled=True, rates={64: 9.0, 120: 10.0})
    newcomer = ControllerState(16)
    crowded = ServerLoad(running=136, waiting=0, kv_usage=0.97)
    big = decide(incumbent, window(120, 500, load=crowded), POLICY)
    small = decide(newcomer, window(16, 100, load=crowded), POLICY)
    # halfway between its 120 requests and the newcomer's 16 (below the 105 that
    # would only bring the cache under 90%): room for a newcomer in one step
    assert "yield" in big.reason and big.limit == 68
    assert small.limit == 16 and not newcomer.settled     # a twentieth of that: nothing
    room = ServerLoad(running=119, waiting=0, kv_usage=0.85)
    assert decide(newcomer, window(16, 110, load=room), POLICY).limit == 32   # doubles
    alone = ServerLoad(running=120, waiting=0, kv_usage=0.97)
    assert decide(ControllerState(120, settled=True, rates={120: 10.0}),
                  window(120, 600, load=alone), POLICY).limit == 120        # no one to yield to
