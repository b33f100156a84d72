"""Every option is declared once (ParseOptions) and every entry point exposes it with
the same default and the same bounds: a layer that misses an option fails here."""

from __future__ import annotations

import argparse
import inspect
import typing
from typing import Any

import annotated_types
import pytest

from ovisocr_loader import GuardPolicy, OvisParser, ParseOptions, RenderSettings
from ovisocr_loader.cli.arguments import build
from ovisocr_loader.options import DEFAULTS, SAME, flag_of

URL = "http://gpu:8000/v1"
OPTIONS = ParseOptions.model_fields
#: Options the command line leaves to Python (objects, or knobs for library users).
NOT_ON_THE_COMMAND_LINE = {"connect_timeout", "errors", "figures", "figures_dir", "prefetch",
                           "cache_layout", "retry", "guard", "health"}


def bounds(name: str) -> list[tuple[Any, bool]]:
    """(value, allowed) pairs at each declared bound of a numeric option."""
    info = OPTIONS[name]
    members = typing.get_args(info.annotation) or (info.annotation,)
    metadata = list(info.metadata)
    for member in members:
        if typing.get_origin(member) is typing.Annotated:
            for extra in typing.get_args(member)[1:]:
                metadata.extend(getattr(extra, "metadata", [extra]))
    cases: list[tuple[Any, bool]] = []
    for item in metadata:
        if isinstance(item, annotated_types.Ge):
            cases += [(item.ge, True), (item.ge - 1, False)]
        elif isinstance(item, annotated_types.Gt):
            cases += [(item.gt, False), (item.gt + 0.5, True)]
        elif isinstance(item, annotated_types.Le):
            cases += [(item.le, True), (item.le + 1, False)]
    return cases


BOUNDED = [(name, value, allowed) for name in OPTIONS for value, allowed in bounds(name)]


def test_the_declaration_has_the_field_tested_defaults_and_bounds():
    assert (DEFAULTS.dpi, DEFAULTS.first_token_timeout, DEFAULTS.page_timeout,
            DEFAULTS.max_concurrency, DEFAULTS.concurrency) == (150, 120, 900, 256, "auto")
    assert {name for name, _, _ in BOUNDED} >= {
        "dpi", "concurrency", "max_concurrency", "first_token_timeout", "page_timeout",
        "connect_timeout", "server_wait", "prefetch", "render_workers"}
    with pytest.raises(ValueError, match="72"):
        RenderSettings(dpi=71)   # the render settings bound DPI the same way


def test_the_parser_takes_every_option_with_its_declared_default():
    parameters = dict(inspect.signature(OvisParser).parameters)
    assert set(parameters) == set(OPTIONS)
    for name, parameter in parameters.items():
        assert parameter.default == OPTIONS[name].default, name
    assert OvisParser(URL).options == ParseOptions(base_url=URL)


@pytest.mark.parametrize(("name", "value", "allowed"), BOUNDED)
def test_every_python_entry_point_has_the_same_bounds(name: str, value: Any, allowed: bool):
    llama_index = pytest.importorskip("ovisocr_loader.llama_index")
    langchain = pytest.importorskip("ovisocr_loader.langchain")
    makers = [lambda **o: OvisParser(URL, **o),
              lambda **o: llama_index.OvisReader(base_url=URL, **o).parser(),
              lambda **o: langchain.OvisBlobParser(base_url=URL, **o).parser]
    for make in makers:
        if allowed:
            assert getattr(make(**{name: value}).options, name) == value
        else:
            with pytest.raises(ValueError, match=name):
                make(**{name: value})


def test_the_reader_and_the_loaders_expose_every_option_with_the_same_default():
    llama_index = pytest.importorskip("ovisocr_loader.llama_index")
    langchain = pytest.importorskip("ovisocr_loader.langchain")
    reader = llama_index.OvisReader()
    for name, info in OPTIONS.items():
        assert llama_index.OvisReader.model_fields[name].default == info.default, name
        assert getattr(reader.parser().options, name) == getattr(DEFAULTS, name), name
    assert langchain.OvisBlobParser().parser.options == DEFAULTS
    # grouped settings objects, httpx-style, through every entry point
    guard = GuardPolicy(first_max_tokens=2048)
    assert llama_index.OvisReader(guard=guard).parser().settings.guard == guard
    assert langchain.OvisBlobParser(guard=guard).parser.settings.guard == guard
    assert llama_index.OvisReader(guard={"first_max_tokens": 2048}).guard == guard


def test_ray_workers_take_the_same_options():
    ray_data = pytest.importorskip("ovisocr_loader.integrations.ray_data")
    worker = ray_data.worker_parser({"base_url": URL, "dpi": 200}, 2)
    assert worker.options == ParseOptions(base_url=URL, dpi=200)
    with pytest.raises(ValueError, match="dpi"):
        ray_data.worker_parser({"base_url": URL, "dpi": 20}, 2)


def _command(name: str) -> argparse.ArgumentParser:
    sub = next(a for a in build()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


@pytest.mark.parametrize("command", ["parse", "review", "eval", "bench"])
def test_the_command_line_flags_follow_the_declaration(command: str):
    actions = {a.dest: a for a in _command(command)._actions}
    for name, info in OPTIONS.items():
        flag = flag_of(info)
        if flag is None or command not in flag.commands:
            assert command != "parse" or name in NOT_ON_THE_COMMAND_LINE, name
            continue
        action = actions[name]
        expected = info.default if flag.default == SAME else flag.default
        assert action.default == expected, name
        assert info.description and info.description.split()[0] in (action.help or ""), name


@pytest.mark.parametrize(("name", "value", "allowed"),
                         [case for case in BOUNDED if flag_of(OPTIONS[case[0]])])
def test_the_command_line_has_the_same_bounds(name: str, value: Any, allowed: bool,
                                              capsys: pytest.CaptureFixture[str]):
    flag = flag_of(OPTIONS[name])
    assert flag is not None
    argv = ["parse", "x.pdf", flag.name or "--" + name.replace("_", "-"), f"{value:g}"]
    if allowed:
        assert getattr(build().parse_args(argv), name) == value
    else:
        with pytest.raises(SystemExit):
            build().parse_args(argv)
        assert "must be" in capsys.readouterr().err
