"""The adaptive concurrency controller (pure): observations in, a new limit out.

The elbow of a vLLM server moves with the GPU and its settings (32 requests on
one RTX 5090; ~12 on a small card, ~128 on a large one). Every window (about
2 s and a dozen finished pages) the controller sees what the client did and, when
the server exposes ``/metrics``, what the server says:

1. **Server pressure** - requests waiting in the server's queue or preemptions
   mean more requests only queue or thrash: the limit backs off by a quarter; a
   KV cache above ``kv_high`` alone takes just enough off to bring it back under.
   Another client's requests count too, so a second client makes ours yield
   instead of fight.
2. **Slow start** - while the limit is binding and throughput keeps rising by
   more than ``plateau``, the limit doubles (``grow``).
3. **Settled** - once throughput stops rising, the limit sits at the elbow: the
   lowest limit whose measured throughput is within ``plateau`` of the best.
   Every ``probe_every`` windows it probes ``probe_step`` requests higher and
   keeps them only if throughput rises (additive probes after multiplicative
   back-offs: two clients drift towards equal shares).

A window in which the limit was not binding (fewer pages than the limit to
send), or in which requests of a higher limit were still draining, teaches
nothing and changes nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .metrics import ServerLoad


@dataclass(frozen=True)
class AdaptivePolicy:
    """The controller's knobs; the defaults are what the benchmark was run with."""

    start: int = 16
    minimum: int = 2
    maximum: int = 256
    window_s: float = 2.0
    min_completions: int = 12
    grow: float = 2.0
    probe_step: int = 4
    probe_every: int = 4
    back_off: float = 0.75
    plateau: float = 0.04
    kv_high: float = 0.9
    #: weight of a new window in a limit's throughput estimate
    smoothing: float = 0.5


@dataclass(frozen=True)
class Observation:
    """One window as the client saw it (and the server said, when it says)."""

    limit: int
    seconds: float
    completed: int
    in_flight: float
    load: ServerLoad | None = None
    preempted: float = 0.0


@dataclass
class ControllerState:
    """What the controller has learned about one endpoint."""

    limit: int
    settled: bool = False
    rates: dict[int, float] = field(default_factory=dict)
    since_probe: int = 0


@dataclass(frozen=True)
class Decision:
    limit: int
    reason: str


def decide(state: ControllerState, obs: Observation, policy: AdaptivePolicy) -> Decision:
    """The limit for the next window (``state`` learns from ``obs``)."""
    rate = obs.completed / obs.seconds if obs.seconds > 0 else 0.0
    binding = obs.in_flight >= 0.75 * obs.limit
    if obs.in_flight > obs.limit + 0.5:   # still draining a higher limit: nothing to learn
        return _set(state, obs.limit, policy, "hold: requests of a higher limit still running")
    pressure = server_pressure(obs, policy)
    if pressure is not None:
        # the server says this many is too many: forget what was measured up here
        state.rates = {n: r for n, r in state.rates.items() if n < obs.limit}
        state.settled, state.since_probe = True, 0
        return _set(state, _backed_off(obs, policy), policy, f"back off: {pressure}")
    if binding:
        old = state.rates.get(obs.limit)
        state.rates[obs.limit] = rate if old is None else (
            old + policy.smoothing * (rate - old))
    if not binding:
        return _set(state, obs.limit, policy, "hold: fewer pages to send than the limit")
    if not state.settled:
        below = [r for limit, r in state.rates.items() if limit < obs.limit]
        if not below or rate > max(below) * (1 + policy.plateau):
            return _set(state, math.ceil(obs.limit * policy.grow), policy,
                        f"grow: {rate * 60:.0f} pages/min and rising")
        state.settled = True
        return _set(state, elbow(state, policy), policy,
                    f"settle: {rate * 60:.0f} pages/min, no longer rising")
    state.since_probe += 1
    best = elbow(state, policy)
    if state.since_probe >= policy.probe_every:
        state.since_probe = 0
        return _set(state, best + policy.probe_step, policy, "probe a little higher")
    return _set(state, best, policy, "hold at the elbow")


def server_pressure(obs: Observation, policy: AdaptivePolicy) -> str | None:
    """Why the server wants fewer requests, or None."""
    load = obs.load
    if load is None:
        return None
    if load.waiting >= 1:
        return f"{load.waiting:.0f} requests waiting in the server's queue"
    if obs.preempted > 0:
        return f"{obs.preempted:.0f} preemptions"
    if load.kv_usage is not None and load.kv_usage >= policy.kv_high:
        return f"KV cache {load.kv_usage:.0%} full"
    return None


def _backed_off(obs: Observation, policy: AdaptivePolicy) -> int:
    """A queue or preemptions: a quarter off. A full KV cache alone: just enough off to
    bring it back under ``kv_high`` (it grows about linearly with requests running)."""
    load = obs.load
    only_kv = load is not None and load.waiting < 1 and obs.preempted <= 0 and \
        load.kv_usage is not None and load.kv_usage < 0.99   # a full cache says not how full
    if only_kv and load is not None and load.kv_usage:
        return min(obs.limit - 1, math.floor(obs.limit * policy.kv_high / load.kv_usage * 0.95))
    return math.floor(obs.limit * policy.back_off)


def elbow(state: ControllerState, policy: AdaptivePolicy) -> int:
    """The lowest limit measured within ``plateau`` of the best throughput."""
    if not state.rates:
        return state.limit
    best = max(state.rates.values())
    return min(limit for limit, rate in state.rates.items()
               if rate >= (1 - policy.plateau) * best)



def _set(state: ControllerState, limit: int, policy: AdaptivePolicy, reason: str) -> Decision:
    state.limit = max(policy.minimum, min(policy.maximum, limit))
    return Decision(state.limit, reason)
