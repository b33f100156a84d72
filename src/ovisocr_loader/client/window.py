"""One adaptive window (pure): what an endpoint did since the controller's last decision.

Its rate is the answer text streamed per second, counted from ``settle_s`` after the
window opened. Tokens flow as soon as the requests of a new limit run, so a limit's
own rate is known a few seconds after it is set; counting finished pages needed
every slot to turn over first (~10 s at 128 requests, each window), and mixed in
the pages of the limit before. The first ``settle_s`` seconds are left out: the
requests just added are still being read (prefill) and stream nothing yet.

The package's tuner and the virtual-time tests use this one class, so the rule for
closing a window lives here only.
"""

from __future__ import annotations

from .adaptive import AdaptivePolicy, Observation
from .metrics import ServerLoad


class Window:
    """Samples of one endpoint since the window opened (counters are running totals)."""

    def __init__(self, completed: int, streamed: int, preemptions: float | None,
                 policy: AdaptivePolicy) -> None:
        self.policy = policy
        self.completed_at_start = completed
        self.preemptions_at_start = preemptions
        self.seconds = 0.0
        self.samples = 0
        self.in_flight_sum = 0.0
        self.completed = 0
        self._streamed_at_start = streamed
        self._streamed_from: tuple[float, int] | None = None
        self._streamed_per_s: float | None = None
        self._metrics_read_at = 0.0

    def sample(self, seconds: float, in_flight: int, completed: int, streamed: int) -> None:
        """The endpoint ``seconds`` after the window opened."""
        self.seconds = seconds
        self.samples += 1
        self.in_flight_sum += in_flight
        self.completed = completed - self.completed_at_start
        if self._streamed_from is None and seconds >= self.policy.settle_s:
            self._streamed_from = (seconds, streamed)
        # a window closed before the settle is over (pressure elsewhere) is still
        # measured in characters per second, from its opening: never in pages
        origin = self._streamed_from
        since, before = origin if origin is not None and seconds > origin[0] \
            else (0.0, self._streamed_at_start)
        if seconds > since:
            self._streamed_per_s = (streamed - before) / (seconds - since)

    @property
    def full(self) -> bool:
        """Long enough to judge the limit by: ``window_s`` of streaming after the settle."""
        return self.seconds >= self.policy.settle_s + self.policy.window_s

    def metrics_due(self) -> bool:
        """True about once a second (how often the server's /metrics is worth reading)."""
        if self.seconds - self._metrics_read_at < 1.0 - 1e-9:
            return False
        self._metrics_read_at = self.seconds
        return True

    def observe(self, limit: int, load: ServerLoad | None, preemptions: float | None,
                outstanding: int) -> Observation:
        """The window as :func:`~.adaptive.decide` sees it."""
        start = self.preemptions_at_start
        preempted = max(0.0, preemptions - start) \
            if preemptions is not None and start is not None else 0.0
        return Observation(limit=limit, seconds=self.seconds, completed=self.completed,
                           in_flight=self.in_flight_sum / max(1, self.samples), load=load,
                           preempted=preempted, outstanding=outstanding,
                           streamed_per_s=self._streamed_per_s)
