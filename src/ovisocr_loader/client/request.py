"""The request contract for OvisOCR2 on vLLM's chat-completions API (pure).

Everything here follows the model card: the official prompt byte for byte (it
starts with a newline; the braces are literal), one user message with the image
part first, greedy decoding, thinking disabled, the pixel bounds per request.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from ..config import MAX_PIXELS, MIN_PIXELS

#: The official OvisOCR2 prompt. Bump PROMPT_VERSION whenever it changes (cache keys).
PROMPT = (
    "\nExtract all readable content from the image in natural human reading order and output "
    "the result as a single Markdown document. For charts or images, represent them using an "
    'HTML image tag: <img src="images/bbox_{left}_{top}_{right}_{bottom}.jpg" />, where left, '
    "top, right, bottom are bounding box coordinates scaled to [0, 1000). Format formulas as "
    "LaTeX. Format tables as HTML: <table>...</table>. Transcribe all other text as standard "
    "Markdown. Preserve the original text without translation or paraphrasing."
)
PROMPT_VERSION = "ovisocr2-card-v1"


@dataclass(frozen=True)
class DecodeParams:
    """What changes between attempts of one page; everything else is fixed."""

    max_tokens: int
    frequency_penalty: float = 0.0
    repetition_detection: bool = False

    def as_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"temperature": 0.0, "max_tokens": self.max_tokens,
                                  "frequency_penalty": self.frequency_penalty}
        if self.repetition_detection:
            record["repetition_detection"] = True
        return record


@dataclass(frozen=True)
class ChatRequest:
    """Keyword arguments for ``AsyncOpenAI().chat.completions.create``."""

    kwargs: dict[str, Any] = field(default_factory=dict)


def image_data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def build_request(model: str, png: bytes, params: DecodeParams) -> ChatRequest:
    """Build one streaming chat-completions request for one page image.

    The first pass never carries a penalty: ``frequency_penalty`` is only sent
    when non-zero, so a greedy first pass is byte-identical to the card's.
    """
    kwargs: dict[str, Any] = {
        "model": model,
        "messages": [{
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": image_data_url(png)}},
                {"type": "text", "text": PROMPT},
            ],
        }],
        "temperature": 0.0,
        "max_tokens": params.max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if params.frequency_penalty:
        kwargs["frequency_penalty"] = params.frequency_penalty
    extra_body: dict[str, Any] = {
        "chat_template_kwargs": {"enable_thinking": False},
        "mm_processor_kwargs": {"images_kwargs": {"min_pixels": MIN_PIXELS,
                                                  "max_pixels": MAX_PIXELS}},
    }
    if params.repetition_detection:
        extra_body["repetition_detection"] = True
    kwargs["extra_body"] = extra_body
    return ChatRequest(kwargs)
