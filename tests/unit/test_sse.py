"""Server-sent event lines (pure)."""

from __future__ import annotations

import pytest

from ovisocr_loader.client.sse import DONE, MalformedEvent, error_message, parse_line


@pytest.mark.parametrize(("line", "expected"), [
    ('data: {"choices": []}', {"choices": []}),
    ('data:{"a": 1}', {"a": 1}),                 # the space after the colon is optional
    ("data: [DONE]", DONE),
    ("", None),
    (": keep-alive comment", None),
    ("event: message", None),
    ("id: 7", None),
    ("retry: 1000", None),
])
def test_lines(line, expected):
    assert parse_line(line) == expected


@pytest.mark.parametrize("line", [
    "this is not an event stream", "data: {not json", "data: [1, 2]", "\x00\x01{",
])
def test_malformed_lines(line):
    with pytest.raises(MalformedEvent):
        parse_line(line)


def test_error_events():
    assert error_message({"error": {"message": "CUDA out of memory", "code": 500}}) == \
        "CUDA out of memory"
    assert error_message({"error": "boom"}) == "boom"
    assert error_message({"choices": []}) is None
