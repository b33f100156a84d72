"""The adaptive controller against a server it was not tuned on.

``benchmarks/batching_server.py`` models vLLM step by step (continuous batching, KV
growing per token, admission limit, preemption), sharing nothing with the package's
simulator. Driven in virtual time (deterministic, a few seconds of CPU), the
controller's windows must reach 0.90 of the best fixed limit on each GPU profile,
and two clients sharing one server must split it fairly.
The same server over real HTTP: ``python benchmarks/bench_adaptive.py --server batching``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ovisocr_loader.client.adaptive import (
    AdaptivePolicy,
    ControllerState,
    decide,
    server_pressure,
)
from ovisocr_loader.client.metrics import ServerLoad
from ovisocr_loader.client.window import Window

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from batching_server import PROFILES, VirtualClient, VirtualServer

POLICY = AdaptivePolicy()
SECONDS = 240.0
SAMPLE_S = 0.25
#: the fixed limits each profile is compared with (its elbow is among them)
SWEEPS = {"small": (8, 12, 16, 20, 24, 32), "big": (48, 64, 96, 128),
          "big-kv": (96, 112, 128, 144, 160, 192)}


class VirtualTuner:
    """The package's tuner loop in virtual time: samples every 0.25 s, looks at the
    server every second (closing the window early on pressure), and closes a window
    when the package's :class:`Window` says it is full."""

    def __init__(self, server: VirtualServer, client: VirtualClient) -> None:
        self.server, self.client = server, client
        self.state = ControllerState(POLICY.start)
        self.limits = [client.limit]
        self._open()

    def _open(self) -> None:
        self.started = self.server.now
        self.window = Window(self.client.completed, self.client.streamed,
                             self.server.load()[3], POLICY)

    def tick(self) -> None:
        """One sample (call every ``SAMPLE_S`` of server time)."""
        window, client = self.window, self.client
        window.sample(self.server.now - self.started, len(client.in_flight), client.completed,
                      client.streamed)
        running, waiting, kv, preemptions = self.server.load()
        obs = window.observe(client.limit, ServerLoad(running, waiting, kv, preemptions),
                             preemptions, len(client.in_flight))
        pressure = (window.metrics_due() and obs.outstanding is not None
                    and obs.outstanding <= obs.limit and server_pressure(obs, POLICY) is not None)
        if pressure or window.full:
            client.limit = decide(self.state, obs, POLICY).limit
            self.limits.append(client.limit)
            self._open()


def fixed(profile: str, limit: int) -> float:
    server = VirtualServer(PROFILES[profile])
    client = server.add(limit)
    server.run(SECONDS)
    return client.completed / server.now * 60


def adaptive(profile: str) -> tuple[float, list[int]]:
    """Pages/min of one client whose limit the controller decides."""
    server = VirtualServer(PROFILES[profile])
    tuner = VirtualTuner(server, server.add(POLICY.start))
    while server.now < SECONDS:
        server.run(SAMPLE_S)
        tuner.tick()
    return tuner.client.completed / server.now * 60, tuner.limits


def shares(profile: str, clients: int, delay: float, seconds: float = 150.0
           ) -> tuple[list[float], list[VirtualTuner]]:
    """Default clients on one server, each ``delay`` s after the one before: each
    one's share of the pages finished once the last has had ``delay`` s (at least
    10) to ramp up."""
    server = VirtualServer(PROFILES[profile])
    tuners: list[VirtualTuner] = []
    counted_from: list[int] = []
    count_from = (clients - 1) * delay + max(10.0, delay)
    while server.now < count_from + seconds:
        if len(tuners) < clients and server.now >= len(tuners) * delay:
            tuners.append(VirtualTuner(server, server.add(POLICY.start)))
        server.run(SAMPLE_S)
        for tuner in tuners:
            tuner.tick()
        if not counted_from and server.now >= count_from:
            counted_from = [t.client.completed for t in tuners]
    counts = [t.client.completed - before for t, before in zip(tuners, counted_from, strict=True)]
    return [count / sum(counts) for count in counts], tuners


@pytest.mark.parametrize("profile", sorted(SWEEPS))
def test_default_concurrency_reaches_nine_tenths_of_the_best_fixed_limit(profile: str):
    best = max(fixed(profile, limit) for limit in SWEEPS[profile])
    rate, limits = adaptive(profile)
    assert rate >= 0.90 * best, (rate / best, limits)


@pytest.mark.parametrize("delay", [5.0, 30.0])
@pytest.mark.parametrize("profile", sorted(SWEEPS))
def test_two_clients_sharing_a_server_split_it_fairly(profile: str, delay: float):
    split, tuners = shares(profile, 2, delay)
    assert min(split) >= 0.40, (split, [t.limits for t in tuners])


@pytest.mark.parametrize("profile", sorted(SWEEPS))
def test_three_clients_each_get_a_fair_part(profile: str):
    split, tuners = shares(profile, 3, delay=10.0)
    assert min(split) >= 0.22, (split, [t.limits for t in tuners])
