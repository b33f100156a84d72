"""Decode tokens spent per looping page: the streaming guard vs the plain recipe.

The plain field recipe lets a looping page decode to the 4096-token cap, then
retries it with frequency_penalty=0.3. The guard closes the stream as soon as
the tail degenerates. Tokens are counted by the simulator (aborted requests
included), on pages that loop the way OvisOCR2 does (digits, "O O O", emoji,
think marker + counter). Target (issue #3): <= 25% of the 4096-token cap spent
on the looping pass.

    python benchmarks/bench_guard.py [--pages-per-kind 5] [--speed 1] [--stream-interval 1]
"""

from __future__ import annotations

import argparse
import statistics

from ovisocr_loader import OvisParser
from ovisocr_loader.testing import LatencyModel, Simulator, marked_pdf, synthetic_markdown

KINDS = ("digits", "o", "emoji", "think")
CAP = 4096


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--pages-per-kind", type=int, default=5)
    ap.add_argument("--speed", type=float, default=1.0,
                    help="simulator speed factor (1 = field-calibrated)")
    ap.add_argument("--stream-interval", type=int, default=1,
                    help="tokens per streamed event (vLLM's --stream-interval)")
    args = ap.parse_args()
    with Simulator(latency=LatencyModel(speed=args.speed),
                   stream_interval=args.stream_interval) as sim:
        pdf, ids = marked_pdf(len(KINDS) * args.pages_per_kind)
        kind_of = {}
        for n, pid in enumerate(ids):
            kind = KINDS[n % len(KINDS)]
            kind_of[pid] = kind
            sim.register(pid, synthetic_markdown(str(pid).encode(), 600), loop=kind,
                         loop_after=300 + 97 * (n % 7))
        doc = OvisParser(base_url=sim.base_url, concurrency=32, cache_dir=False).parse(pdf)
        records = sim.completions()
    assert all(p.ok and not p.loop_trimmed for p in doc.pages), "every looping page must heal"
    print(f"{len(ids)} looping pages, simulator speed {args.speed:g}x, cap {CAP} tokens, "
          f"{args.stream_interval} tokens per event")
    print(f"{'loop kind':<10}{'loop pass':>11}{'retry':>8}{'guarded':>9}{'plain':>8}"
          f"{'saved':>8}{'loop pass/cap':>15}")
    all_loop, all_guarded, all_plain = [], [], []
    for kind in KINDS:
        loop_pass, retry = [], []
        for pid, k in kind_of.items():
            if k != kind:
                continue
            first, second = [r for r in records if r.page_id == pid]
            loop_pass.append(first.tokens_generated)
            retry.append(second.tokens_generated)
        guarded = [a + b for a, b in zip(loop_pass, retry, strict=True)]
        plain = [CAP + b for b in retry]
        all_loop += loop_pass
        all_guarded += guarded
        all_plain += plain
        print(f"{kind:<10}{statistics.mean(loop_pass):>11.0f}{statistics.mean(retry):>8.0f}"
              f"{statistics.mean(guarded):>9.0f}{statistics.mean(plain):>8.0f}"
              f"{1 - sum(guarded) / sum(plain):>8.0%}{statistics.mean(loop_pass) / CAP:>15.1%}")
    print(f"{'all':<10}{statistics.mean(all_loop):>11.0f}{'':>8}"
          f"{statistics.mean(all_guarded):>9.0f}{statistics.mean(all_plain):>8.0f}"
          f"{1 - sum(all_guarded) / sum(all_plain):>8.0%}"
          f"{max(all_loop) / CAP:>15.1%} (worst page)")


if __name__ == "__main__":
    main()
