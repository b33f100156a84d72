"""The cache key comes from the object that builds the requests: no stale hit is possible."""

from __future__ import annotations

import dataclasses

import pytest

from ovisocr_loader._engine.cache import page_key
from ovisocr_loader.client.request import RequestRecipe
from ovisocr_loader.config import GuardPolicy, RenderSettings


def _changed(value: object) -> object:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value + 0.1
    raise AssertionError(f"unexpected setting type {type(value)}")


BASE = RequestRecipe("ATH-MaaS/OvisOCR2", GuardPolicy())
RENDER = RenderSettings()


@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(GuardPolicy)])
def test_every_guard_setting_changes_the_key(name):
    guard = dataclasses.replace(GuardPolicy(), **{name: _changed(getattr(GuardPolicy(), name))})
    changed = dataclasses.replace(BASE, guard=guard)
    assert page_key("sha", 1, RENDER, changed) != page_key("sha", 1, RENDER, BASE)


@pytest.mark.parametrize(("render", "recipe"), [
    (RenderSettings(dpi=200), BASE),
    (RenderSettings(min_pixels=300 * 300), dataclasses.replace(BASE, min_pixels=300 * 300)),
    (RenderSettings(max_pixels=2000 * 2000), dataclasses.replace(BASE, max_pixels=2000 * 2000)),
    (RENDER, dataclasses.replace(BASE, model="other/model")),
    (RenderSettings(orientation="auto"), BASE),
])
def test_render_settings_and_model_change_the_key(render, recipe):
    assert page_key("sha", 1, render, recipe) != page_key("sha", 1, RENDER, BASE)


def test_the_key_ignores_what_cannot_change_the_answer():
    assert page_key("sha", 1, RenderSettings(png_compress_level=9), BASE) == page_key(
        "sha", 1, RENDER, BASE)
    assert page_key("sha", 2, RENDER, BASE) != page_key("sha", 1, RENDER, BASE)


def test_the_fingerprint_holds_exactly_what_is_sent():
    recipe = RequestRecipe("m", GuardPolicy(server_repetition_detection=True),
                           min_pixels=500 * 500, max_pixels=1000 * 1000)
    sent = recipe.build(b"data:PNG", recipe.loop_retry()).kwargs
    printed = recipe.fingerprint()["requests"][1]
    assert {k: v for k, v in sent.items() if k != "messages"} == {
        k: v for k, v in printed.items() if k != "messages"}
    assert sent["extra_body"]["mm_processor_kwargs"]["images_kwargs"] == {
        "min_pixels": 500 * 500, "max_pixels": 1000 * 1000}
    assert sent["frequency_penalty"] == 0.3
