"""How many tokens a text costs an embedding model, estimated without a tokenizer.

Chunk budgets default to this estimate, so it has to hold for what OCR pages are
made of, not only English prose: the word-piece tokenizers of common embedding
models (MiniLM, bge, e5) cut a number into pieces of about three digits, give
every CJK character and most punctuation a token of its own, and split words of
scripts they know less into short pieces. Four characters a token, the usual rule
of thumb, counted a Chinese page at a third of its word pieces and a table of
numbers at three quarters. Measured against all-MiniLM-L6-v2 on chunks of TAT-QA
pages and of the other models' pages in ``../shared/reference/model_outputs``
(docs/benchmarks.md, "Token estimate").
"""

from __future__ import annotations

import re

#: CJK ideographs, kana, hangul and full-width forms: a token (or more) each
CJK_CHARACTERS = ("\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
                  "\uf900-\ufaff\uff00-\uffef")
_LATIN = "A-Za-z\u00c0-\u024f"
LATIN_LETTERS_PER_TOKEN = 7
OTHER_LETTERS_PER_TOKEN = 2
DIGITS_PER_TOKEN = 3
#: one match per estimated token (a single scan: budgets are counted many times a chunk)
_TOKENS = re.compile(
    f"[{CJK_CHARACTERS}]"
    f"|\\d{{1,{DIGITS_PER_TOKEN}}}"
    f"|[{_LATIN}]{{1,{LATIN_LETTERS_PER_TOKEN}}}"
    f"|[^\\W\\d_{_LATIN}{CJK_CHARACTERS}]{{1,{OTHER_LETTERS_PER_TOKEN}}}"
    r"|[^\w\s]|_")


def approx_tokens(text: str) -> int:
    """Estimated word pieces: a Latin-script word per seven letters, a number per three
    digits, a letter of another alphabet per two, a CJK character or any other mark one."""
    return len(_TOKENS.findall(text))
