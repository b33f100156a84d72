"""The request contract for OvisOCR2 on vLLM's chat-completions API (pure).

Everything here follows the model card: the official prompt byte for byte (it
starts with a newline; the braces are literal), one user message with the image
part first, greedy decoding, thinking disabled, the pixel bounds per request.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Final

from ..config import MAX_PIXELS, MIN_PIXELS, GuardPolicy

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
#: GLM-OCR's page prompt (its model card's "Text Recognition:" task).
GLM_OCR_PROMPT = "Text Recognition:"
#: docling's page prompt for its DocTags models (SmolDocling, Granite-Docling).
DOCLING_PROMPT = "Convert this page to docling."
#: Prompts by name, for ``prompt=`` and ``--prompt``; any other value is sent as written.
PROMPTS = {"ovisocr2": PROMPT, "glm-ocr": GLM_OCR_PROMPT, "docling": DOCLING_PROMPT}


def resolve_prompt(prompt: str | None) -> str:
    """The text to send: OvisOCR2's prompt by default, a named prompt, or ``prompt`` itself."""
    if prompt is None:
        return PROMPT
    if not prompt.strip():
        raise ValueError(f"prompt must hold text or name one of {sorted(PROMPTS)}")
    return PROMPTS.get(prompt.strip().lower(), prompt)


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


#: Where the page image's URL stands in :attr:`ChatRequest.kwargs`.
IMAGE_SLOT: Final = "<the page image as a data: URL>"


@dataclass(frozen=True)
class ChatRequest:
    """One streaming chat-completions request: its fields as openai's ``create`` takes
    them, with :data:`IMAGE_SLOT` for the page image, and the image apart.

    The image is kept out of the JSON encoder: ~200 KB of base64 needs no escaping,
    yet scanning it cost 0.8 ms of the event loop per page; :meth:`encoded` splices
    it into the encoded fields instead.
    """

    kwargs: dict[str, Any] = field(default_factory=dict)
    data_url: bytes = b""

    def body(self) -> dict[str, Any]:
        """The JSON fields as sent on the wire (``extra_body`` merged in, as openai
        does), the image still :data:`IMAGE_SLOT`."""
        body = {k: v for k, v in self.kwargs.items() if k != "extra_body"}
        body.update(self.kwargs.get("extra_body") or {})
        return body

    def encoded(self) -> bytes:
        """The request body as sent: JSON, the image in its place."""
        head, _, tail = json.dumps(self.body()).encode().partition(_ENCODED_SLOT)
        return b"".join((head, b'"', self.data_url, b'"', tail))


_ENCODED_SLOT = json.dumps(IMAGE_SLOT).encode()


def build_request(model: str, data_url: bytes, params: DecodeParams, *,
                  min_pixels: int = MIN_PIXELS, max_pixels: int = MAX_PIXELS,
                  prompt: str = PROMPT) -> ChatRequest:
    """Build one streaming chat-completions request for one page image (its PNG as
    a ``data:`` URL, see :func:`~ovisocr_loader.sources.png.png_data_url`).

    The first pass never carries a penalty: ``frequency_penalty`` is only sent
    when non-zero, so a greedy first pass is byte-identical to the card's. The
    pixel bounds are the ones the page was rendered into.
    """
    kwargs: dict[str, Any] = {
        "model": model,
        "messages": [{
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": IMAGE_SLOT}},
                {"type": "text", "text": prompt},
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
        "mm_processor_kwargs": {"images_kwargs": {"min_pixels": min_pixels,
                                                  "max_pixels": max_pixels}},
    }
    if params.repetition_detection:
        extra_body["repetition_detection"] = True
    kwargs["extra_body"] = extra_body
    return ChatRequest(kwargs, data_url)


@dataclass(frozen=True)
class RequestRecipe:
    """Everything that decides what the server is asked for a page, in one object.

    It builds every request (:meth:`build`) and names the decoding of each pass
    (:meth:`first`, :meth:`loop_retry`, :meth:`long_retry`); the cache key is
    derived from the same object (:meth:`fingerprint`), so a setting that changes
    the answer can never be left out of the key.
    """

    model: str
    guard: GuardPolicy = field(default_factory=GuardPolicy)
    min_pixels: int = MIN_PIXELS
    max_pixels: int = MAX_PIXELS
    #: the text part of every request (another model's prompt to compare models)
    prompt: str = PROMPT

    def first(self) -> DecodeParams:
        """Greedy, no penalty (penalties distort legitimate repetition)."""
        g = self.guard
        return DecodeParams(g.first_max_tokens, 0.0, g.server_repetition_detection)

    def loop_retry(self) -> DecodeParams:
        """After a degenerate first pass: the same cap with a frequency penalty."""
        g = self.guard
        return DecodeParams(g.first_max_tokens, g.frequency_penalty, g.server_repetition_detection)

    def long_retry(self) -> DecodeParams:
        """After a clean page that hit the cap: a larger cap, never penalized."""
        g = self.guard
        return DecodeParams(g.long_max_tokens, 0.0, g.server_repetition_detection)

    def build(self, data_url: bytes, params: DecodeParams) -> ChatRequest:
        return build_request(self.model, data_url, params, min_pixels=self.min_pixels,
                             max_pixels=self.max_pixels, prompt=self.prompt)

    def fingerprint(self) -> dict[str, Any]:
        """What can change a page's answer: every request as sent (without the image)
        and every guard setting."""
        requests = []
        for params in (self.first(), self.loop_retry(), self.long_retry()):
            kwargs = dict(self.build(b"", params).kwargs)
            kwargs["messages"] = [{**m, "content": [c for c in m["content"]
                                                    if c.get("type") != "image_url"]}
                                  for m in kwargs["messages"]]
            requests.append(kwargs)
        return {"prompt_version": PROMPT_VERSION, "requests": requests,
                "guard": dataclasses.asdict(self.guard)}
