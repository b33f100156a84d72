"""OvisReader through SimpleDirectoryReader, on the simulator."""

from __future__ import annotations

import asyncio
import json
import pickle
import subprocess
import sys
from pathlib import Path

import fsspec
import pytest
from llama_index.core import SimpleDirectoryReader
from llama_index.core.schema import MetadataMode

from ovisocr_loader import SourceError
from ovisocr_loader.llama_index import OvisReader
from ovisocr_loader.testing import (
    HttpError,
    LatencyModel,
    PageScript,
    Simulator,
    marked_pdf,
    synthetic_markdown,
)

from .conftest import FAX, MEMO, REPORT, Scans

EXTENSIONS = (".pdf", ".png", ".tif")


def extractor(reader: OvisReader) -> dict[str, OvisReader]:
    return dict.fromkeys(EXTENSIONS, reader)


def by_file(docs, name):
    return [d for d in docs if d.metadata["file_name"] == name]


def test_one_document_per_page_with_page_metadata(ovis_simulator: Simulator, scans: Scans):
    reader = OvisReader(base_url=ovis_simulator.base_url)
    docs = SimpleDirectoryReader(str(scans.root), file_extractor=extractor(reader)).load_data()
    report = by_file(docs, "report.pdf")
    assert [d.text for d in report] == [*REPORT, ""]
    assert [d.metadata["page_label"] for d in report] == ["1", "2", "3", "4"]
    assert [d.metadata["page_number"] for d in report] == [1, 2, 3, 4]
    assert {d.metadata["total_pages"] for d in report} == {4}
    assert [d.metadata["blank"] for d in report] == [False, False, False, True]
    first = report[0].metadata
    assert first["file_path"] == str(scans.report)        # SimpleDirectoryReader's extra_info
    assert first["ocr_model"] == ovis_simulator.model
    assert first["loop_trimmed"] is False and first["ocr_error"] is None
    assert [d.text for d in by_file(docs, "fax.tif")] == FAX
    assert [d.text for d in by_file(docs, "memo.png")] == [MEMO]
    # technical keys stay out of what is embedded and what an LLM sees; the page label is
    # for the LLM to cite (to an embedding model it is noise)
    embedded = report[1].get_content(metadata_mode=MetadataMode.EMBED)
    llm = report[1].get_content(metadata_mode=MetadataMode.LLM)
    assert "page_label: 2" in llm and "page_label" not in embedded
    for text in (embedded, llm):
        assert "ocr_model" not in text and "source_sha256" not in text and "blank" not in text


def test_ids_are_path_and_page_so_a_resync_updates_in_place(ovis_simulator: Simulator,
                                                             scans: Scans, tmp_path: Path):
    reader = OvisReader(base_url=ovis_simulator.base_url)
    first = [d.id_ for d in reader.load_data(scans.report)]
    assert [d.id_ for d in reader.load_data(scans.report)] == first
    assert first == [f"{scans.report}_p{n}" for n in range(1, 5)]
    copy = tmp_path / "renamed.pdf"                 # a copy is indexed under its own name
    copy.write_bytes(scans.report.read_bytes())
    assert [d.id_ for d in reader.load_data(copy)] == [f"{copy}_p{n}" for n in range(1, 5)]


def test_iter_data_and_aload_data_give_the_same_documents(ovis_simulator: Simulator,
                                                          scans: Scans):
    reader = OvisReader(base_url=ovis_simulator.base_url)
    directory = SimpleDirectoryReader(str(scans.root), file_extractor=extractor(reader))
    iterated = [d for batch in directory.iter_data() for d in batch]
    gathered = asyncio.run(directory.aload_data())
    assert sorted((d.id_, d.text) for d in iterated) == sorted((d.id_, d.text) for d in gathered)
    assert len(gathered) == 4 + 2 + 1


def test_the_async_reader_methods_give_what_load_data_gives(ovis_simulator: Simulator,
                                                            scans: Scans):
    """``aload_data`` and ``alazy_load_data`` (overridden: BaseReader's would run
    ``load_data`` in a thread) give the Documents ``load_data`` gives, in order."""
    reader = OvisReader(base_url=ovis_simulator.base_url)
    loaded = [(d.id_, d.text) for d in reader.load_data(scans.report)]

    async def both() -> tuple[list[object], list[object]]:
        return (list(await reader.aload_data(scans.report)),
                list(await reader.alazy_load_data(scans.report)))

    for docs in asyncio.run(both()):
        assert [(d.id_, d.text) for d in docs] == loaded
    assert len(loaded) == 4


def test_aload_data_shares_one_limit_across_one_page_files(tmp_path: Path):
    # 24 one-page faxes gathered at once must keep about `concurrency` requests in flight;
    # pages last over a second each, so that refilling a slot (open, render: milliseconds,
    # a few hundred on a loaded machine) stays small beside them
    with Simulator(latency=LatencyModel(speed=1.5)) as sim:
        for n in range(24):
            pdf, (pid,) = marked_pdf(1)
            sim.register(pid, synthetic_markdown(str(n).encode()))
            (tmp_path / f"fax{n:02}.pdf").write_bytes(pdf)
        reader = OvisReader(base_url=sim.base_url, concurrency=6)
        directory = SimpleDirectoryReader(str(tmp_path), file_extractor={".pdf": reader})
        docs = asyncio.run(directory.aload_data())
        starts = [r.in_flight_at_start for r in sim.completions()]
        assert sim.max_in_flight == 6
        assert sorted(starts[6:18])[6] >= 5          # the middle of the run stays saturated
        assert sum(r.path == "/v1/models" for r in sim.requests) == 1
    assert len(docs) == 24 and all(d.text for d in docs)


def test_reader_pickles_and_serializes_without_a_live_client(ovis_simulator: Simulator,
                                                             scans: Scans):
    reader = OvisReader(base_url=ovis_simulator.base_url, api_key="secret", concurrency=4)
    reader.load_data(scans.memo)                       # the cached parser now exists
    clone = pickle.loads(pickle.dumps(reader))
    assert [d.text for d in clone.load_data(scans.memo)] == [MEMO]
    data = json.loads(reader.to_json())
    assert data["class_name"] == "OvisReader" and data["concurrency"] == 4
    assert "secret" not in reader.to_json() and "secret" not in repr(reader)
    assert OvisReader.from_dict(data).base_url == ovis_simulator.base_url


def test_num_workers_processes(ovis_simulator: Simulator, scans: Scans):
    reader = OvisReader(base_url=ovis_simulator.base_url)
    docs = SimpleDirectoryReader(str(scans.root), file_extractor=extractor(reader)
                                 ).load_data(num_workers=2)
    assert sorted(d.text for d in docs) == sorted([*REPORT, "", *FAX, MEMO])


def test_split_document_joins_pages_with_a_form_feed(ovis_simulator: Simulator, scans: Scans):
    reader = OvisReader(base_url=ovis_simulator.base_url, split="document")
    (doc,) = reader.load_data(scans.report, extra_info={"file_name": "report.pdf"})
    assert doc.text == "\f".join([*REPORT, ""])
    assert doc.metadata["total_pages"] == 4 and doc.metadata["file_name"] == "report.pdf"
    assert doc.id_ == str(scans.report)


def test_split_element(ovis_simulator: Simulator, scans: Scans):
    reader = OvisReader(base_url=ovis_simulator.base_url, split="element")
    docs = reader.load_data(scans.report)
    kinds = [(d.metadata["page_number"], d.metadata["category"]) for d in docs
              if "category" in d.metadata]
    assert kinds == [(1, "heading"), (1, "paragraph"), (1, "heading"), (2, "paragraph"),
                     (2, "table"), (2, "figure"), (2, "caption"), (3, "heading"),
                     (3, "paragraph")]
    table = next(d for d in docs if d.metadata.get("category") == "table")
    assert table.text == "Vessel | Tonnage\nAurora Tonnage: 1200.\nBorealis Tonnage: 950."
    assert table.metadata["table_html"].startswith("<table>")
    assert table.metadata["header_path"] == "/Harbour report/Fleet/"
    assert "table_html" not in table.get_content(metadata_mode=MetadataMode.EMBED)
    figure = next(d for d in docs if d.metadata.get("category") == "figure")
    assert figure.text == "Figure 1: Map of the basin."
    assert figure.metadata["bbox"] == "100,600,500,900"
    blank = [d for d in docs if d.metadata.get("blank")]
    assert [d.metadata["page_number"] for d in blank] == [4]     # no page goes missing
    assert len({d.id_ for d in docs}) == len(docs)


def test_a_failed_page_is_a_document_with_ocr_error(ovis_simulator: Simulator, tmp_path: Path):
    pdf, ids = marked_pdf(2)
    ovis_simulator.register(ids[0], "Page one.")
    ovis_simulator.register(ids[1], PageScript("x", faults={1: HttpError(400)}))
    path = tmp_path / "two.pdf"
    path.write_bytes(pdf)
    docs = OvisReader(base_url=ovis_simulator.base_url).load_data(path)
    assert [d.text for d in docs] == ["Page one.", ""]
    assert docs[1].metadata["ocr_error"].startswith("ServerStatusError")
    assert docs[0].metadata["ocr_error"] is None


def test_unreadable_files_are_recorded_or_raised(ovis_simulator: Simulator, tmp_path: Path):
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.7\nthis is not a pdf")
    (doc,) = OvisReader(base_url=ovis_simulator.base_url).load_data(bad)
    assert doc.text == ""
    assert doc.metadata["ocr_error"].startswith("CorruptFileError")
    with pytest.raises(SourceError, match="broken.pdf"):
        OvisReader(base_url=ovis_simulator.base_url, errors="raise").load_data(bad)


def test_fsspec_filesystems(ovis_simulator: Simulator, scans: Scans):
    fs = fsspec.filesystem("memory")
    fs.pipe("/bucket/memo.png", scans.memo.read_bytes())
    reader = OvisReader(base_url=ovis_simulator.base_url)
    docs = SimpleDirectoryReader(input_files=["/bucket/memo.png"], fs=fs,
                                 file_extractor=extractor(reader)).load_data()
    assert [d.text for d in docs] == [MEMO]


def test_figure_crops_need_a_directory():
    with pytest.raises(ValueError, match="figures_dir"):
        OvisReader(figures="crop")


def test_cache_dir_makes_a_second_read_free(ovis_simulator: Simulator, scans: Scans,
                                            tmp_path: Path):
    reader = OvisReader(base_url=ovis_simulator.base_url, cache_dir=tmp_path / "cache")
    first = reader.load_data(scans.fax)
    before = len(ovis_simulator.completions())
    again = OvisReader(base_url=ovis_simulator.base_url, cache_dir=tmp_path / "cache"
                       ).load_data(scans.fax)
    assert len(ovis_simulator.completions()) == before
    assert [(d.id_, d.text) for d in again] == [(d.id_, d.text) for d in first]


FD_SCRIPT = """
import asyncio, resource, sys
from pathlib import Path
from llama_index.core import SimpleDirectoryReader
from ovisocr_loader.llama_index import OvisReader
from ovisocr_loader.testing import Simulator, marked_pdf

folder = Path(sys.argv[1])
for n in range(400):
    (folder / f"fax{n:03}.pdf").write_bytes(marked_pdf(1)[0])
resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
with Simulator() as sim:
    reader = OvisReader(base_url=sim.base_url, concurrency=8)
    docs = asyncio.run(SimpleDirectoryReader(str(folder), file_extractor={".pdf": reader},
                                             raise_on_error=True).aload_data())
print(len(docs), sum(1 for d in docs if d.text and d.metadata["ocr_error"] is None))
"""


def test_a_folder_larger_than_the_file_descriptor_limit(tmp_path: Path):
    # aload_data starts one parse per file at once; open inputs are bounded per session,
    # so 400 files under a 256-descriptor limit still all parse
    result = subprocess.run([sys.executable, "-c", FD_SCRIPT, str(tmp_path)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["400", "400"]


def test_one_file_at_a_time_gets_one_warning_with_the_fix(ovis_simulator: Simulator,
                                                          tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture):
    for n in range(5):
        (tmp_path / f"fax{n}.pdf").write_bytes(marked_pdf(1)[0])
    reader = OvisReader(base_url=ovis_simulator.base_url, concurrency=8)
    directory = SimpleDirectoryReader(str(tmp_path), file_extractor={".pdf": reader})
    with caplog.at_level("WARNING", logger="ovisocr_loader"):
        assert len(directory.load_data()) == 5
        assert len(directory.load_data()) == 5
    advice = [r.getMessage() for r in caplog.records if "one file at a time" in r.getMessage()]
    assert len(advice) == 1                                  # once per reader
    assert "1 of 8 pages were in flight" in advice[0]
    assert "asyncio.run(SimpleDirectoryReader(...).aload_data())" in advice[0]
    caplog.clear()
    fresh = OvisReader(base_url=ovis_simulator.base_url, concurrency=8)
    with caplog.at_level("WARNING", logger="ovisocr_loader"):
        asyncio.run(SimpleDirectoryReader(str(tmp_path),
                                          file_extractor={".pdf": fresh}).aload_data())
        fresh.load_data(str(tmp_path / "fax0.pdf"))          # one sync call alone: fine
    assert not [r for r in caplog.records if "one file at a time" in r.getMessage()]
