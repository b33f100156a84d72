"""vLLM's Prometheus ``/metrics`` (pure parsing): how loaded the server is.

Names are vLLM V1's: ``vllm:num_requests_running``, ``vllm:num_requests_waiting``,
``vllm:kv_cache_usage_perc`` (0-1; ``vllm:gpu_cache_usage_perc`` is the retired
name, still read), ``vllm:num_preemptions_total``, ``vllm:generation_tokens_total``.
Counts of one name are summed over label sets (several engines of a data-parallel
server, or models); the KV-cache usage, a fraction per engine, is averaged over them
(two engines half full are a server half full, not a full one).
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass

_SAMPLE = re.compile(r"^(vllm:[a-z_]+?)(?:_total)?(?:\{[^}]*\})?\s+([-+0-9.eE]+|NaN|[+-]Inf)\s*")


@dataclass(frozen=True)
class ServerLoad:
    """One reading of the server's own counters (None where it does not say)."""

    running: float
    waiting: float
    kv_usage: float | None = None
    preemptions: float | None = None
    generation_tokens: float | None = None


def metrics_url(base_url: str) -> str:
    """``/metrics`` on the endpoint's host (vLLM serves it beside ``/v1``)."""
    parts = urllib.parse.urlsplit(base_url)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, "/metrics", "", ""))


def parse_metrics(text: str) -> ServerLoad | None:
    """The load in a Prometheus text exposition, or None if it holds no vLLM gauges."""
    samples: dict[str, list[float]] = {}
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if match is None:
            continue
        try:
            value = float(match.group(2))
        except ValueError:
            continue
        if value == value:   # not NaN
            samples.setdefault(match.group(1).removesuffix("_total"), []).append(value)
    if "vllm:num_requests_running" not in samples and "vllm:num_requests_waiting" not in samples:
        return None
    values = {name: sum(found) for name, found in samples.items()}
    usages = samples.get("vllm:kv_cache_usage_perc", samples.get("vllm:gpu_cache_usage_perc"))
    kv = sum(usages) / len(usages) if usages else None
    return ServerLoad(running=values.get("vllm:num_requests_running", 0.0),
                      waiting=values.get("vllm:num_requests_waiting", 0.0),
                      kv_usage=kv, preemptions=values.get("vllm:num_preemptions"),
                      generation_tokens=values.get("vllm:generation_tokens"))
