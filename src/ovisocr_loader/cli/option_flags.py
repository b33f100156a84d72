"""The ``ovisocr`` flags of parse options, generated from their declaration
(:class:`~ovisocr_loader.options.ParseOptions`): name, type, bounds, choices, default
and help come from there, so a new option with a :class:`Flag` is one edit."""

from __future__ import annotations

import argparse
import textwrap
import types
import typing
from collections.abc import Callable
from typing import Any

import annotated_types
from pydantic.fields import FieldInfo

from ..options import SAME, Flag, flag_of, option_fields

_HELP_WIDTH = 68


def add_option_flags(p: argparse.ArgumentParser, command: str) -> None:
    """Every option whose flag lists ``command``, as an argument of ``p``."""
    for name, (info, flag) in _flagged(command).items():
        default = info.default if flag.default == SAME else flag.default
        p.add_argument(flag.name or "--" + name.replace("_", "-"), dest=name,
                       metavar=flag.metavar, default=default, help=_help(info, default),
                       **_value_kind(info, flag))


def options_from_args(args: argparse.Namespace, command: str) -> dict[str, Any]:
    """The parse options ``command`` was given (each flag's value, defaults included)."""
    options = {name: getattr(args, name) for name in _flagged(command)}
    if getattr(args, "no_cache", False):
        options["cache_dir"] = False
    return options


def _flagged(command: str) -> dict[str, tuple[FieldInfo, Flag]]:
    flagged = {}
    for name, info in option_fields().items():
        flag = flag_of(info)
        if flag is not None and command in flag.commands:
            flagged[name] = (info, flag)
    return flagged


def _value_kind(info: FieldInfo, flag: Flag) -> dict[str, Any]:
    """``action``/``choices``/``type`` for the option's type: a list when repeated,
    the values of a Literal, a number within its bounds (or ``auto``), else text."""
    if flag.repeat:
        return {"action": "append"}
    kinds = _kinds(info.annotation)
    literals = [v for k in kinds if typing.get_origin(k) is typing.Literal
                for v in typing.get_args(k) if isinstance(v, str)]   # False: its own flag
    numbers = [k for k in kinds if _base(k) in (int, float)]
    if not numbers:
        return {"choices": literals} if literals else {}
    number_type = _base(numbers[0])
    parse = number(number_type, *_bounds([*info.metadata, *_metadata(numbers[0])]))
    return {"type": _or_words(parse, literals) if literals else parse}


def _kinds(annotation: Any) -> list[Any]:
    """The members of a union (``None`` left out), else the type itself."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [k for k in typing.get_args(annotation) if k is not type(None)]
    return [annotation]


def _base(kind: Any) -> Any:
    return typing.get_args(kind)[0] if typing.get_origin(kind) is typing.Annotated else kind


def _metadata(kind: Any) -> list[Any]:
    """Constraints inside ``Annotated[int, Field(ge=1)]``."""
    if typing.get_origin(kind) is not typing.Annotated:
        return []
    return [m for extra in typing.get_args(kind)[1:]
            for m in (extra.metadata if isinstance(extra, FieldInfo) else [extra])]


def _bounds(metadata: list[Any]) -> tuple[float, float | None, bool]:
    low, high, low_open = float("-inf"), None, False
    for item in metadata:
        if isinstance(item, annotated_types.Ge):
            low = float(item.ge)  # type: ignore[arg-type]
        elif isinstance(item, annotated_types.Gt):
            low, low_open = float(item.gt), True  # type: ignore[arg-type]
        elif isinstance(item, annotated_types.Le):
            high = float(item.le)  # type: ignore[arg-type]
    return low, high, low_open


def _or_words(parse: Callable[[str], float], words: list[str]) -> Callable[[str], Any]:
    def parse_or_word(text: str) -> Any:
        word = text.strip().lower()
        return word if word in words else parse(text)
    return parse_or_word


def number(kind: type[int] | type[float], low: float, high: float | None = None,
           low_open: bool = False) -> Callable[[str], float]:
    """An argparse type: a number within bounds, else a usage error naming them."""
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        too_low = value <= low if low_open else value < low
        if too_low or (high is not None and value > high):
            bounds = f"> {low:g}" if low_open else f">= {low:g}"
            if high is not None:
                bounds = f"between {low:g} and {high:g}"
            raise argparse.ArgumentTypeError(f"must be {bounds}, got {text}")
        return value
    return parse


def _help(info: FieldInfo, default: Any) -> str:
    """The option's help wrapped, its default unbroken at the end."""
    lines = textwrap.wrap(info.description or "", _HELP_WIDTH, break_on_hyphens=False)
    if "(default:" not in (info.description or ""):
        said = f"(default: {_shown(default)})"
        if lines and len(lines[-1]) + 1 + len(said) <= _HELP_WIDTH:
            lines[-1] += " " + said
        else:
            lines.append(said)
    return "\n".join(lines)


def _shown(value: Any) -> str:
    return "none" if value is None else f"{value:g}" if isinstance(value, float) else str(value)
