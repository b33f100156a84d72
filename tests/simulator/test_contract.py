"""The request contract as the server sees it, and the parser's public behaviour."""

from __future__ import annotations

import asyncio

import pytest

from ovisocr_loader import OvisParser, ParsedDocument, ServerStatusError
from ovisocr_loader.client.request import PROMPT
from ovisocr_loader.testing import (
    Simulator,
    make_pdf,
    marked_pdf,
    next_page_id,
    page_image,
    tokenize,
)


def test_every_contract_field_reaches_the_server(ovis_simulator: Simulator):
    pdf, ids = marked_pdf(1)
    ovis_simulator.register(ids[0], "# Title\n\nBody text.")
    doc = OvisParser(base_url=ovis_simulator.base_url).parse(pdf)
    assert doc.pages[0].markdown == "# Title\n\nBody text."
    (record,) = ovis_simulator.completions()
    body = record.body
    assert record.content_types == ["image_url", "text"]
    assert record.prompt == PROMPT
    assert len(body["messages"]) == 1 and body["messages"][0]["role"] == "user"
    assert body["model"] == ovis_simulator.model  # discovered with GET /v1/models
    assert body["temperature"] == 0
    assert body["max_tokens"] == 4096
    assert "frequency_penalty" not in body
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["mm_processor_kwargs"] == {
        "images_kwargs": {"min_pixels": 200704, "max_pixels": 8294400}}
    assert (record.image_width, record.image_height) == (1275, 1650)
    assert record.image_format == "png" and record.image_mode == "L"
    attempt = doc.pages[0].attempts[0]
    assert attempt.finish_reason == "stop"
    expected_tokens = len(tokenize("# Title\n\nBody text."))
    assert attempt.completion_tokens == expected_tokens == record.tokens_generated
    assert attempt.params["max_tokens"] == 4096 and attempt.latency_s > 0


def test_a4_page_size_on_the_wire(ovis_simulator: Simulator):
    pid = next_page_id()
    pdf = make_pdf([page_image(pid, size=(1240, 1754))], dpi=150)
    OvisParser(base_url=ovis_simulator.base_url).parse(pdf)
    (record,) = ovis_simulator.completions()
    assert (record.image_width, record.image_height) == (1240, 1754)


def test_model_base_url_and_key_from_environment(monkeypatch: pytest.MonkeyPatch):
    with Simulator(model="served-name", api_key="k-123") as sim:
        monkeypatch.setenv("OVISOCR_BASE_URL", sim.base_url)
        monkeypatch.setenv("OVISOCR_API_KEY", "k-123")
        monkeypatch.setenv("OVISOCR_MODEL", "served-name")
        pdf, _ = marked_pdf(1)
        parser = OvisParser()
        assert "k-123" not in repr(parser)
        assert parser.parse(pdf).model == "served-name"
        assert sim.completions()[0].body["model"] == "served-name"


def test_a_model_the_server_does_not_serve_fails_before_any_page(ovis_simulator: Simulator):
    pdf, _ = marked_pdf(1)
    with pytest.raises(ServerStatusError) as caught:
        OvisParser(base_url=ovis_simulator.base_url, model="nope").parse(pdf)
    assert "'nope' is not served" in str(caught.value)
    assert "it serves: ATH-MaaS/OvisOCR2" in str(caught.value)
    assert caught.value.status_code == 404
    assert ovis_simulator.completions() == []


def test_parsed_document_round_trips_through_json(ovis_simulator: Simulator):
    pdf, _ = marked_pdf(2)
    doc = OvisParser(base_url=ovis_simulator.base_url).parse(pdf, name="two.pdf")
    again = ParsedDocument.model_validate_json(doc.model_dump_json())
    assert again == doc
    assert again.schema_name == "ovisocr_loader.ParsedDocument" and again.version == "1.3.0"
    assert [p.page_number for p in again.pages] == [1, 2]
    assert again.total_pages == 2 and again.source == "two.pdf" and len(again.sha256 or "") == 64


def test_parse_works_inside_a_running_event_loop(ovis_simulator: Simulator):
    pdf, _ = marked_pdf(2)
    parser = OvisParser(base_url=ovis_simulator.base_url)

    async def notebook_cell() -> ParsedDocument:
        return parser.parse(pdf)  # sync call while a loop runs, as in Jupyter

    doc = asyncio.run(notebook_cell())
    assert len(doc.pages) == 2 and all(p.markdown for p in doc.pages)


def test_page_selection_only_sends_selected_pages(ovis_simulator: Simulator):
    pdf, ids = marked_pdf(5)
    doc = OvisParser(base_url=ovis_simulator.base_url).parse(pdf, pages=[2, 5])
    assert [p.page_number for p in doc.pages] == [2, 5]
    assert sorted(r.page_id for r in ovis_simulator.completions()) == [ids[1], ids[4]]
    assert doc.total_pages == 5


def test_blank_pages_are_not_sent(ovis_simulator: Simulator):
    pid = next_page_id()
    pdf = make_pdf([page_image(pid, lines=["text"]), page_image(None), page_image(None,
                                                                                lines=["x"])])
    doc = OvisParser(base_url=ovis_simulator.base_url).parse(pdf)
    assert [p.blank for p in doc.pages] == [False, True, False]
    assert doc.pages[1].markdown == "" and doc.pages[1].attempts == []
    assert len(ovis_simulator.completions()) == 2
    assert all(r.page_key != "blank" for r in ovis_simulator.completions())
