"""``ovisocr bench`` (measure an endpoint) and ``ovisocr simulate`` (serve the simulator)."""

from __future__ import annotations

import argparse
import json
import time

from .._sync import SIGNAL_CHECK_S
from ..errors import OvisLoaderError
from .arguments import EXIT_FAILED, EXIT_OK, EXIT_UNUSABLE
from .option_flags import options_from_args
from .parse_command import say


def run_bench(args: argparse.Namespace) -> int:
    from .. import bench  # page generation pulls in the test-page helpers; only here

    try:
        levels = sorted({int(v) for v in args.levels.split(",") if v.strip()})
    except ValueError:
        say(f"--levels must be integers: {args.levels}")
        return EXIT_UNUSABLE
    if not levels or min(levels) < 1:
        say("--levels needs at least one level >= 1")
        return EXIT_UNUSABLE
    try:
        results = bench.run(levels, args.pages_per_level, args.warmup,
                            **options_from_args(args, "bench"))
    except OvisLoaderError as exc:
        say(str(exc))
        return EXIT_UNUSABLE
    print(bench.report(results))
    return EXIT_FAILED if any(r.errors for r in results) else EXIT_OK


def run_simulate(args: argparse.Namespace) -> int:
    from ..testing import DEFAULT_MODEL, Simulator

    sim = Simulator.for_gpu(args.gpu, speed=args.speed, model=args.model or DEFAULT_MODEL,
                            port=args.port, stream_interval=int(args.stream_interval))
    try:
        sim.start()
    except OSError as exc:
        say(f"cannot listen on 127.0.0.1:{args.port} ({exc.strerror or exc}); "
            "pick another port with --port, or --port 0 for any free one")
        return EXIT_UNUSABLE
    print(json.dumps({"base_url": sim.base_url, "model": sim.model}), flush=True)
    try:
        while True:   # short sleeps: Ctrl-C may reach the simulator's thread, not this one
            time.sleep(SIGNAL_CHECK_S)
    finally:
        sim.stop()
