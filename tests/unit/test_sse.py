"""Server-sent event lines (pure)."""

from __future__ import annotations

import pytest

from ovisocr_loader.client.sse import (
    DONE,
    EventSplitter,
    MalformedEvent,
    TokenShape,
    error_message,
    parse_line,
    quick_content,
)


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


def test_the_splitter_cuts_lines_across_reads_and_utf8_sequences():
    splitter = EventSplitter()
    euro = "€".encode()
    assert splitter.feed(b'data: {"a": "x' + euro[:1]) == ""
    assert splitter.feed(euro[1:] + b'"}\n\ndata: [DO') == 'data: {"a": "x€"}\n\n'
    assert splitter.feed(b"NE]\n") == "data: [DONE]\n"
    assert splitter.feed(b"data: tail") == "" and splitter.close() == "data: tail"
    with pytest.raises(MalformedEvent):
        EventSplitter(max_chars=8).feed(b"x" * 20)


VLLM_TOKEN = ('data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,'
              '"model":"m","choices":[{"index":0,"delta":{"content":%s},"logprobs":null,'
              '"finish_reason":null}]}')


@pytest.mark.parametrize("content", ["Hello", ' "quoted"\n', "\\\\ back", "", "Über ∑ 😀"])
def test_a_plain_token_event_is_read_without_parsing_and_agrees_with_json(content):
    import json

    line = VLLM_TOKEN % json.dumps(content)
    assert quick_content(line) == content == parse_line(line)["choices"][0]["delta"]["content"]


@pytest.mark.parametrize("line", [
    'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""},'
    '"finish_reason":null}]}',                                     # the role comes first
    'data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}',
    'data: {"choices":[{"index":0,"delta":{"content":"x","reasoning":"y"},'
    '"finish_reason":null}]}',                                     # more than content
    'data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}],'
    '"usage":{"completion_tokens":3}}',
    'data: {"error":{"message":"boom"},"choices":[{"index":0,"delta":{"content":"x"},'
    '"finish_reason":null}]}',
    'data: {"choices":[{"index":0,"delta":{"content":"unterminated}]}',
    'event: {"delta":{"content":"x"},"finish_reason":null}',
])
def test_every_other_event_is_left_to_the_full_parser(line):
    assert quick_content(line) is None


def test_the_plain_token_shape_is_read_with_json_spaces_too():
    line = ('data: {"choices": [{"index": 0, "delta": {"content": "a b"}, '
            '"finish_reason": null}]}')
    assert quick_content(line) == "a b"


def _shape() -> TokenShape:
    shape = TokenShape()
    shape.learn(VLLM_TOKEN % '"first"')
    return shape


def test_a_read_of_plain_token_events_is_read_in_one_go_and_agrees_with_json():
    import json

    contents = ["Hello", ' "quoted"\n', "\\\\ back", "", "Über ∑ 😀", "<td>1</td>", "x\\y"]
    block = "".join(VLLM_TOKEN % json.dumps(c) + "\n\n" for c in contents)
    assert TokenShape().text(block) is None          # nothing learned yet
    assert _shape().text(block) == "".join(contents)
    assert _shape().text("") == "" and _shape().text("\n\n") == ""


@pytest.mark.parametrize("other", [
    'data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}',
    VLLM_TOKEN.replace("null}", '"stop"}') % '"x"',
    VLLM_TOKEN % '"x"' + ',"usage":{"completion_tokens":3}}',
    VLLM_TOKEN.replace("chatcmpl-1", "chatcmpl-2") % '"x"',
    "data: [DONE]",
    ": keep-alive",
    "not an event at all",
    VLLM_TOKEN % '"a raw \x01 control character"',
    VLLM_TOKEN % '"two"},"extra":{"content":"strings"',
    VLLM_TOKEN % '"ends in an escaped quote\\"',
    VLLM_TOKEN % '"ends in a backslash\\\\"',
    (VLLM_TOKEN % '""').replace('""}', '"}'),                    # head and tail overlap
])
def test_a_read_with_any_other_line_is_left_to_the_line_by_line_path(other):
    block = VLLM_TOKEN % '"a"' + "\n\n" + other + "\n\n" + VLLM_TOKEN % '"b"' + "\n\n"
    assert _shape().text(block) is None


def test_crlf_lines_come_out_as_lf_lines_and_take_the_fast_path():
    import json

    crlf = "".join(VLLM_TOKEN % json.dumps(c) + "\r\n\r\n" for c in ["a", "b\r\n", "c"])
    splitter = EventSplitter()
    block = splitter.feed(crlf[:-1].encode()) + splitter.feed(crlf[-1:].encode())
    assert "\r" not in block.replace("\\r", "")        # the escaped \r of "b\r\n" stays
    assert _shape().text(block) == "ab\r\nc"
    assert splitter.feed(b"data: [DONE]\r") == "" and splitter.close() == "data: [DONE]\r"
    assert parse_line("data: [DONE]\r") == DONE
