"""The ``ovisocr`` command: parse files, measure an endpoint, or run the simulator.

``ovisocr eval OUTPUTS --reference REFS`` scores a run (word F1) and ``ovisocr compare
A B`` puts two runs head to head.
``ovisocr review PATH... -o DIR`` writes a static site showing every page beside
its elements. ``ovisocr parse PATH...`` writes one output per input, shows progress and a
summary, and exits 0 (all parsed), 1 (some page or file failed), 2 (nothing
usable: no input, no server, a bad option) or 130 (interrupted). Bad input and
bad server answers are one line each, never a traceback.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from ..options import resolve_base_urls
from .arguments import EXIT_INTERRUPTED, EXIT_UNUSABLE, build
from .eval_command import run_compare, run_eval
from .other_commands import run_bench, run_simulate
from .parse_command import run_parse, say
from .review_command import run_review


def main(argv: Sequence[str] | None = None) -> int:
    args = build().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="ovisocr: %(message)s")
    if hasattr(args, "base_url") and args.command != "simulate":
        try:   # a URL with a key in it is a usage error, said before anything is read
            resolve_base_urls(args.base_url)
        except ValueError as exc:
            say(str(exc))
            return EXIT_UNUSABLE
    try:
        if args.command == "simulate":
            return run_simulate(args)
        if args.command == "bench":
            return run_bench(args)
        if args.command == "review":
            return run_review(args)
        if args.command == "eval":
            return run_eval(args)
        if args.command == "compare":
            return run_compare(args)
        return run_parse(args)
    except KeyboardInterrupt:
        print("ovisocr: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


__all__ = ["main"]
