"""The adaptive concurrency controller (pure): observations in, a new limit out.

The elbow of a vLLM server moves with the GPU and its settings (32 requests on
one RTX 5090; ~12 on a small card, ~128 on a large one). Every window (about
3 s, see :mod:`.window`) the controller sees what the client did (its rate: the
answer text streamed per second) and, when the server exposes ``/metrics``, what
the server says:

1. **Server pressure** - a real queue in the server (``queue_share`` of the
   requests running, and at least two: a request or two wait between scheduler
   steps even when there is room) means more requests only queue: the limit
   drops by the queued share. Thrashing (``preempt_per_page`` preemptions per
   finished page, counted over ``min_completions`` pages at least; a few are the
   price of a full KV cache) takes a quarter off (``back_off``). Pressure seen
   before a cut shows makes no second cut (see :func:`_cut`); room to grow
   still counts.
2. **Slow start** - while the limit is binding and throughput keeps rising by
   more than ``plateau``, the limit grows: by ``grow``, or up to ``max_grow``
   times when the KV cache says that many more requests fit (its usage is about
   proportional to the requests running), never past ``kv_high``. A cache at
   ``kv_high`` stops the growth; alone, it is no reason to back off: a KV-bound
   server runs best with its cache nearly full.
3. **Settled** - once throughput stops rising, the limit sits at the elbow: the
   lowest limit whose measured throughput is within ``plateau`` of the best.
   Every ``probe_every_s`` seconds it probes ``probe_step`` requests higher and
   keeps them only if throughput rises.

**Shared servers.** The server's counters hold every client's requests, so each
client knows its share. A client holding half or more takes a whole cut; a
smaller one cuts by less (weight ``(2 * share) ** 2``), and one under
``minority`` stays in slow start: shares converge, and a newcomer grows into its
share while the incumbent makes room. A full KV cache shared with others makes
each yield, in that proportion, enough to bring it under ``kv_high`` and, for a
client holding more requests than the others, half the difference.
Probes are timed in seconds, not windows, so a client with long windows (a
small limit) probes as often as one with short ones.

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
    #: seconds of streaming a window measures, after ``settle_s`` (requests just
    #: added are being read by the server and stream nothing yet)
    window_s: float = 2.0
    settle_s: float = 1.0
    min_completions: int = 12
    grow: float = 2.0
    max_grow: float = 3.0
    probe_step: int = 4
    #: seconds between probes (time, not windows: a client with long windows
    #: probes as often as one with short ones, so two sharing a server converge)
    probe_every_s: float = 30.0
    back_off: float = 0.75
    plateau: float = 0.04
    kv_high: float = 0.9
    queue_share: float = 0.1
    preempt_per_page: float = 1.0
    #: below this share of the server's requests, pressure does not end slow start
    minority: float = 0.4
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
    #: our requests in flight when ``load`` was read (the window's mean if not given)
    outstanding: float | None = None
    #: answer characters streamed per second (the rate; pages per second if not given)
    streamed_per_s: float | None = None

    @property
    def rate(self) -> float:
        if self.streamed_per_s is not None:
            return self.streamed_per_s
        return self.completed / self.seconds if self.seconds > 0 else 0.0

    def describe_rate(self) -> str:
        return f"{self.streamed_per_s:.0f} characters/s" if self.streamed_per_s is not None \
            else f"{self.rate * 60:.0f} pages/min"


@dataclass
class ControllerState:
    """What the controller has learned about one endpoint."""

    limit: int
    settled: bool = False
    rates: dict[int, float] = field(default_factory=dict)
    since_probe: float = 0.0
    #: pages still to finish before the last back-off has taken effect
    cut_pending: int = 0


@dataclass(frozen=True)
class Decision:
    limit: int
    reason: str


def decide(state: ControllerState, obs: Observation, policy: AdaptivePolicy) -> Decision:
    """The limit for the next window (``state`` learns from ``obs``)."""
    binding = obs.in_flight >= 0.75 * obs.limit
    state.cut_pending = max(0, state.cut_pending - obs.completed)
    if obs.in_flight > obs.limit + 0.5:   # still draining a higher limit: nothing to learn
        return _set(state, obs.limit, policy, "hold: requests of a higher limit still running")
    pressure = server_pressure(obs, policy)
    crowded = kv_full(obs, policy) if _others_present(obs) else None
    if state.cut_pending and (pressure or crowded):   # they predate the last cut
        return _set(state, obs.limit, policy, "hold: the last back-off is taking effect")
    if pressure is not None:
        limit = math.floor(obs.limit * _back_off_factor(obs, policy))
        return _cut(state, obs, policy, limit, f"back off: {pressure}", queued=_queued(obs, policy))
    if crowded is not None:   # a full cache shared with other clients
        return _cut(state, obs, policy, min(_under_kv_high(obs, policy), _halfway(obs)),
                    f"yield: {crowded}, shared with other clients")
    if not binding:
        return _set(state, obs.limit, policy, "hold: fewer pages to send than the limit")
    old = state.rates.get(obs.limit)
    state.rates[obs.limit] = obs.rate if old is None else (
        old + policy.smoothing * (obs.rate - old))
    return _steady(state, obs, policy) if state.settled else _search(state, obs, policy)


def _search(state: ControllerState, obs: Observation, policy: AdaptivePolicy) -> Decision:
    """Before the elbow is found: grow while the rate rises and the KV cache has room."""
    below = [r for limit, r in state.rates.items() if limit < obs.limit]
    full = kv_full(obs, policy)
    if full is None and (not below or obs.rate > max(below) * (1 + policy.plateau)):
        return _set(state, math.ceil(obs.limit * _growth(obs, policy)), policy,
                    f"grow: {obs.describe_rate()} and rising")
    state.settled = True
    return _set(state, elbow(state, policy), policy,
                f"settle: {obs.describe_rate()}, {full or 'no longer rising'}")


def _steady(state: ControllerState, obs: Observation, policy: AdaptivePolicy) -> Decision:
    """After the elbow: hold there, probe a little higher now and then, and, sharing the
    server, let the smaller client grow while the larger makes room."""
    state.since_probe += obs.seconds
    best = elbow(state, policy)
    if _others_present(obs):
        if share(obs) < 0.5:
            best = max(best, obs.limit)   # keeps its probes until the server objects
        elif _nearly_full(obs, policy):
            return _set(state, best, policy, "hold: the larger part of a full server")
    if state.since_probe >= policy.probe_every_s:
        state.since_probe = 0.0
        return _set(state, best + policy.probe_step, policy, "probe a little higher")
    return _set(state, best, policy, "hold at the elbow")


def _cut(state: ControllerState, obs: Observation, policy: AdaptivePolicy, target: int,
         reason: str, queued: bool = False) -> Decision:
    """Back off towards ``target``, as far as our share of the server says. What was
    measured at the limits given up is forgotten; a client holding a small share
    stays in slow start (how a newcomer gets its share). The next cut waits until
    this one shows: for a queue, until as many pages as were given up have
    finished; for a KV cache or preemptions, which lag, until every slot has
    turned over."""
    limit = _fair_cut(obs, target)
    if limit < obs.limit:
        state.rates = {n: r for n, r in state.rates.items() if n < limit}
        state.since_probe = 0.0
        state.cut_pending = max(policy.min_completions,
                                obs.limit - limit if queued else limit)
    state.settled = state.settled or share(obs) >= policy.minority
    return _set(state, limit, policy, reason)


def server_pressure(obs: Observation, policy: AdaptivePolicy) -> str | None:
    """Why the server wants fewer requests, or None."""
    load = obs.load
    if load is None:
        return None
    if _queued(obs, policy):
        return f"{load.waiting:.0f} requests waiting in the server's queue"
    if obs.preempted >= policy.preempt_per_page * max(policy.min_completions, obs.completed):
        return f"{obs.preempted:.0f} preemptions for {obs.completed} pages"
    return None


def kv_full(obs: Observation, policy: AdaptivePolicy) -> str | None:
    """Why growing further would only preempt, or None."""
    usage = obs.load.kv_usage if obs.load is not None else None
    return f"KV cache {usage:.0%} full" if usage is not None and usage >= policy.kv_high \
        else None


def share(obs: Observation) -> float:
    """Our part of the server's requests (1.0 alone, or when it does not say)."""
    load = obs.load
    total = load.running + load.waiting if load is not None else 0.0
    return min(1.0, _ours(obs) / total) if total > 0 else 1.0


def _ours(obs: Observation) -> float:
    return obs.outstanding if obs.outstanding is not None else obs.in_flight


def _fair_cut(obs: Observation, target: int) -> int:
    """Cut to ``target`` when we hold half the server's requests or more; with a
    smaller share, cut by less (by its square: shares converge fast)."""
    weight = min(1.0, 2 * share(obs)) ** 2
    return obs.limit - round((obs.limit - target) * weight) if target < obs.limit \
        else target


def _nearly_full(obs: Observation, policy: AdaptivePolicy) -> bool:
    """A queue, or a KV cache within a tenth of ``kv_high``: no room to give away."""
    load = obs.load
    return load is not None and (load.waiting >= 2 or (
        load.kv_usage is not None and load.kv_usage >= policy.kv_high - 0.1))


def _others_present(obs: Observation) -> bool:
    """Does the server hold requests other than ours (another client's)? Without a
    /metrics reading, ``_others`` is 0: no."""
    others = _others(obs)
    return others >= 2 if obs.outstanding is not None else others > 0.1 * obs.in_flight + 2


def _others(obs: Observation) -> float:
    """The other clients' requests in the server (running or waiting)."""
    load = obs.load
    return load.running + load.waiting - _ours(obs) if load is not None else 0.0


def _halfway(obs: Observation) -> int:
    """Half the gap between our requests and the others' off: a client holding more
    of a full server than the rest makes room for a newcomer in one step, not in
    slivers a turn-over apart (each yield of a KV cache waits for one)."""
    load = obs.load
    if load is None:
        return obs.limit
    return obs.limit - max(0, math.floor((_ours(obs) - _others(obs)) / 2))


def _under_kv_high(obs: Observation, policy: AdaptivePolicy) -> int:
    """Just enough off to bring the KV cache back under ``kv_high`` (its usage grows
    about linearly with requests); a quarter when it is full (it says not how full)."""
    usage = obs.load.kv_usage if obs.load is not None else None
    if usage is None or usage >= 0.99:
        return math.floor(obs.limit * policy.back_off)
    return min(obs.limit - 1, math.floor(obs.limit * policy.kv_high / usage * 0.95))


def _growth(obs: Observation, policy: AdaptivePolicy) -> float:
    """``grow``, or more when the KV cache has room for that many more requests (alone:
    with other clients the room is theirs too)."""
    load = obs.load
    if load is None or not load.kv_usage or load.running < 1 or _others_present(obs):
        return policy.grow
    fits = policy.kv_high / load.kv_usage * min(1.0, load.running / obs.limit)
    return max(policy.grow, min(policy.max_grow, fits)) if fits > policy.grow \
        else max(1.0 + policy.plateau, fits)


def _queued(obs: Observation, policy: AdaptivePolicy) -> bool:
    """A real queue in the server (not just a request or two between steps)."""
    load = obs.load
    return load is not None and load.waiting >= max(2.0, policy.queue_share * load.running)


def _back_off_factor(obs: Observation, policy: AdaptivePolicy) -> float:
    """A real queue: keep the share the server runs. Thrashing: ``back_off``."""
    load = obs.load
    if load is not None and _queued(obs, policy):
        return load.running / (load.running + load.waiting)
    return policy.back_off


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
