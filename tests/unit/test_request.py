import base64

from ovisocr_loader.client.request import PROMPT, DecodeParams, build_request

CARD_PROMPT = (
    "\nExtract all readable content from the image in natural human reading order and output "
    "the result as a single Markdown document. For charts or images, represent them using an "
    'HTML image tag: <img src="images/bbox_{left}_{top}_{right}_{bottom}.jpg" />, where left, '
    "top, right, bottom are bounding box coordinates scaled to [0, 1000). Format formulas as "
    "LaTeX. Format tables as HTML: <table>...</table>. Transcribe all other text as standard "
    "Markdown. Preserve the original text without translation or paraphrasing."
)


def test_prompt_is_the_card_prompt_byte_for_byte():
    assert PROMPT == CARD_PROMPT
    assert PROMPT.startswith("\nExtract")
    assert "{left}_{top}_{right}_{bottom}" in PROMPT


def test_first_pass_body_follows_the_contract():
    kwargs = build_request("m", b"PNGDATA", DecodeParams(max_tokens=4096)).kwargs
    content = kwargs["messages"][0]["content"]
    assert [part["type"] for part in content] == ["image_url", "text"]
    assert content[1]["text"] == PROMPT
    url = content[0]["image_url"]["url"]
    assert base64.b64decode(url.split(",", 1)[1]) == b"PNGDATA"
    assert url.startswith("data:image/png;base64,")
    assert kwargs["temperature"] == 0.0
    assert kwargs["max_tokens"] == 4096
    assert kwargs["stream"] is True
    assert kwargs["stream_options"] == {"include_usage": True}
    assert "frequency_penalty" not in kwargs
    extra = kwargs["extra_body"]
    assert extra["chat_template_kwargs"] == {"enable_thinking": False}
    assert extra["mm_processor_kwargs"] == {
        "images_kwargs": {"min_pixels": 200704, "max_pixels": 8294400}}
    assert "repetition_detection" not in extra


def test_retry_body_carries_the_penalty_and_optional_repetition_detection():
    kwargs = build_request("m", b"x", DecodeParams(4096, 0.3, True)).kwargs
    assert kwargs["frequency_penalty"] == 0.3
    assert kwargs["extra_body"]["repetition_detection"] is True
