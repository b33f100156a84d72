import base64
import copy
import json

from ovisocr_loader.client.request import IMAGE_SLOT, PROMPT, DecodeParams, build_request
from ovisocr_loader.sources.png import png_data_url

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
    kwargs = json.loads(build_request("m", png_data_url(b"PNGDATA"),
                                      DecodeParams(max_tokens=4096)).encoded())  # as sent
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
    assert kwargs["chat_template_kwargs"] == {"enable_thinking": False}
    assert kwargs["mm_processor_kwargs"] == {
        "images_kwargs": {"min_pixels": 200704, "max_pixels": 8294400}}
    assert "repetition_detection" not in kwargs
    assert "extra_body" not in kwargs


def test_the_image_is_spliced_into_the_body_exactly_where_json_would_put_it():
    url = png_data_url(bytes(range(256)) * 40)
    request = build_request("m", url, DecodeParams(max_tokens=4096),
                            prompt=f"Read this; ignore {IMAGE_SLOT}")
    fields = copy.deepcopy(request.body())
    fields["messages"][0]["content"][0]["image_url"]["url"] = url.decode()
    assert request.encoded() == json.dumps(fields).encode()


def test_retry_body_carries_the_penalty_and_optional_repetition_detection():
    kwargs = build_request("m", b"data:x", DecodeParams(4096, 0.3, True)).kwargs
    assert kwargs["frequency_penalty"] == 0.3
    assert kwargs["extra_body"]["repetition_detection"] is True
