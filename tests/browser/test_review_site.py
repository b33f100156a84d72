"""The review site in a real browser (Debian's Chromium driven by Playwright): what a
person sees - every page, its image loaded, boxes on the figures, tables as tables,
flags visible - and not one request leaving the site's folder."""

from __future__ import annotations

import io
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from .conftest import Reviewed

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).exists():
    pytest.skip("Debian's chromium is not installed (apt-get install chromium)",
                allow_module_level=True)

QUIET = ["--no-sandbox", "--disable-background-networking", "--disable-component-update",
         "--disable-default-apps", "--disable-sync", "--no-first-run",
         "--metrics-recording-only", "--disable-domain-reliability"]
EXPECTED = {"report.pdf": ([1, 2, 3], {2: "loop_trimmed", 3: "blank"}),
            "fax.pdf": ([1, 2], {2: "error"}),
            "memo.tif": ([1, 2], {2: "blank"})}


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=QUIET)
        yield chromium
        chromium.close()


@pytest.fixture()
def page(browser, reviewed: Reviewed) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    tab.requests = []
    tab.on("request", lambda request: tab.requests.append(request.url))
    yield tab
    outside = [u for u in tab.requests if not u.startswith(reviewed.site.as_uri() + "/")]
    assert outside == []   # nothing fetched from anywhere else, ever
    context.close()


def _document_href(page, name: str) -> str:
    row = page.locator(f'tr[data-document$="{name}"]')
    return row.locator("a").get_attribute("href")


def test_index_lists_every_document_with_its_flags(page, reviewed: Reviewed) -> None:
    page.goto((reviewed.site / "index.html").as_uri())
    assert page.locator("tr[data-document]").count() == 3
    for name, (_, flags) in EXPECTED.items():
        row = page.locator(f'tr[data-document$="{name}"]')
        assert set(row.get_attribute("data-flag").split()) == set(flags.values())
        assert row.locator(".flag").first.is_visible()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_page_is_shown_with_its_image_and_its_flags(page, reviewed: Reviewed,
                                                          name: str) -> None:
    page.goto((reviewed.site / "index.html").as_uri())
    page.click(f'tr[data-document$="{name}"] a')
    numbers, flags = EXPECTED[name]
    sections = page.locator("section[data-page]")
    assert [int(s.get_attribute("data-page")) for s in sections.all()] == numbers
    images = page.locator("section[data-page] img")
    assert images.count() == len(numbers)
    for image in images.all():   # loaded lazily: as a person scrolls to them
        image.scroll_into_view_if_needed()
        image.evaluate("i => i.decode()")
        assert image.evaluate("i => i.complete && i.naturalWidth > 0")
    for number in numbers:
        section = page.locator(f'section[data-page="{number}"]')
        if number in flags:
            assert section.get_attribute("data-flag") == flags[number]
            badge = section.locator(f'.flag[data-flag-name="{flags[number]}"]')
            assert badge.is_visible()
        else:
            assert section.get_attribute("data-flag") is None
    if name == "fax.pdf":   # the failed page says why
        assert "HTTP 400" in page.locator('section[data-page="2"] .error').inner_text()


@pytest.mark.parametrize("name", ["report.pdf", "fax.pdf"])
def test_figure_boxes_sit_on_the_figures(page, reviewed: Reviewed, name: str,
                                         tmp_path: Path) -> None:
    # the figure is a dark rectangle on a white page: inside its box, the screen is dark
    page.goto((reviewed.site / _document_href_from_index(page, reviewed, name)).as_uri())
    page.locator('section[data-page="1"] img').evaluate("i => i.decode()")
    box = page.locator('section[data-page="1"] .box[data-kind="figure"]')
    assert box.count() == 1
    rect = box.bounding_box()
    shot = page.screenshot(clip={"x": rect["x"] + 8, "y": rect["y"] + 18,
                                 "width": rect["width"] - 16, "height": rect["height"] - 26})
    inside = Image.open(io.BytesIO(shot)).convert("L")
    dark = sum(inside.histogram()[:100]) / (inside.width * inside.height)
    assert dark > 0.9
    target = box.get_attribute("href")
    assert page.locator(target).get_attribute("data-kind") == "figure"
    page.screenshot(path=str(tmp_path / f"{name}.png"))   # for a person to look at


def test_tables_are_tables_and_model_html_cannot_run(page, reviewed: Reviewed) -> None:
    page.goto((reviewed.site / _document_href_from_index(page, reviewed, "report.pdf")
               ).as_uri())
    table = page.locator('[data-kind="table"] table')
    assert table.count() == 1 and table.locator("tr").count() == 3
    assert table.locator("th[rowspan='2']").inner_text() == "Vessel"
    assert table.locator("th[colspan='2']").inner_text() == "Tonnage"
    assert page.evaluate("document.scripts.length") == 0
    assert page.locator("[onclick]").count() == 0
    formula = page.locator('[data-kind="formula"]')
    assert "E = mc^2" in formula.inner_text() and formula.is_visible()
    heading = page.locator('[data-kind="heading"]')
    assert "Harbour report" in heading.inner_text()


def _document_href_from_index(page, reviewed: Reviewed, name: str) -> str:
    page.goto((reviewed.site / "index.html").as_uri())
    return _document_href(page, name)
