"""Re-syncs pay only for what changed (issue #54): the cache on by default, keyed by
what was sent, bounded; ids stable in every process; a failed page keeps its last
good read. The whole sync with both frameworks' tools runs in ``examples/sync_*.py``
(tests/test_examples.py checks every line they print)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import platformdirs
import pytest

from ovisocr_loader import OvisParser
from ovisocr_loader._engine.cache import CACHE_FILE, PageCache, PageFiles
from ovisocr_loader.document import PageResult
from ovisocr_loader.options import ParseOptions
from ovisocr_loader.testing import (
    HttpError,
    PageScript,
    Simulator,
    next_page_id,
    synthetic_markdown,
    write_scan,
)

#: a page the server fails on every try, however often it is sent
ALWAYS_400 = {attempt: HttpError(400) for attempt in range(1, 20)}


def sent_ids(sim: Simulator) -> set[int | None]:
    return {r.page_id for r in sim.completions()}


def test_the_cache_is_on_by_default_and_can_be_moved_or_turned_off(
        monkeypatch: pytest.MonkeyPatch, own_cache: Path):
    assert ParseOptions().settings().cache_dir == str(own_cache)        # $OVISOCR_CACHE_DIR
    monkeypatch.delenv("OVISOCR_CACHE_DIR")
    assert ParseOptions().settings().cache_dir == platformdirs.user_cache_dir("ovisocr-loader")
    assert ParseOptions(cache_dir=False).settings().cache_dir is None
    assert ParseOptions(cache_dir="~/x").settings().cache_dir == str(Path.home() / "x")


def test_an_unchanged_rerun_with_defaults_sends_nothing(ovis_simulator: Simulator,
                                                        tmp_path: Path):
    source = tmp_path / "a.pdf"
    write_scan(ovis_simulator, source, [next_page_id() for _ in range(3)])
    first = OvisParser(base_url=ovis_simulator.base_url).parse(source)
    ovis_simulator.reset_records()
    again = OvisParser(base_url=ovis_simulator.base_url).parse(source)
    assert ovis_simulator.completions() == [] and all(p.cached for p in again.pages)
    assert [p.markdown for p in again.pages] == [p.markdown for p in first.pages]
    ovis_simulator.reset_records()
    OvisParser(base_url=ovis_simulator.base_url, cache_dir=False).parse(source)
    assert len(ovis_simulator.completions()) == 3


def test_an_edited_file_sends_only_its_new_pages_wherever_the_old_ones_moved(
        ovis_simulator: Simulator, tmp_path: Path):
    ids = [next_page_id() for _ in range(4)]
    source = tmp_path / "a.pdf"
    write_scan(ovis_simulator, source, ids)
    parser = OvisParser(base_url=ovis_simulator.base_url)
    before = parser.parse(source)
    inserted, replaced = next_page_id(), next_page_id()
    write_scan(ovis_simulator, source, [inserted, ids[0], ids[1], replaced, ids[3]])
    ovis_simulator.reset_records()
    after = parser.parse(source)
    assert sent_ids(ovis_simulator) == {inserted, replaced}
    moved = after.pages[1]                  # was page 1, now page 2
    assert moved.cached and moved.markdown == before.pages[0].markdown
    assert moved.page_number == 2 and {e.page_number for e in moved.elements} == {2}


def test_a_copy_under_another_name_sends_nothing(ovis_simulator: Simulator, tmp_path: Path):
    write_scan(ovis_simulator, tmp_path / "a.pdf", [next_page_id() for _ in range(2)])
    OvisParser(base_url=ovis_simulator.base_url).parse(tmp_path / "a.pdf")
    (tmp_path / "b.pdf").write_bytes((tmp_path / "a.pdf").read_bytes() + b"\n%")  # new hash
    ovis_simulator.reset_records()
    OvisParser(base_url=ovis_simulator.base_url).parse(tmp_path / "b.pdf")
    assert ovis_simulator.completions() == []


def test_a_failed_page_yields_its_last_good_read_in_both_frameworks(
        ovis_simulator: Simulator, tmp_path: Path, caplog: pytest.LogCaptureFixture):
    from ovisocr_loader.langchain import OvisLoader
    from ovisocr_loader.llama_index import OvisReader

    ids = [next_page_id() for _ in range(2)]
    source = tmp_path / "a.pdf"
    write_scan(ovis_simulator, source, ids)
    reader = OvisReader(base_url=ovis_simulator.base_url)
    good = reader.load_data(source)
    rescanned = next_page_id()
    write_scan(ovis_simulator, source, [ids[0], rescanned])
    ovis_simulator.register(rescanned, PageScript("x", faults=ALWAYS_400))
    again = OvisReader(base_url=ovis_simulator.base_url).load_data(source)
    assert [(d.id_, d.text, d.hash) for d in again] == [(d.id_, d.text, d.hash) for d in good]
    assert "page 2 failed (ServerStatusError" in caplog.text
    pages = OvisLoader(source, base_url=ovis_simulator.base_url).load()
    assert pages[1].page_content == good[1].text and pages[1].metadata["ocr_error"] is None
    fresh = tmp_path / "never.pdf"           # no good read ever: an empty, flagged page
    never = next_page_id()
    write_scan(ovis_simulator, fresh, [never])
    ovis_simulator.register(never, PageScript("x", faults=ALWAYS_400))
    (doc,) = OvisReader(base_url=ovis_simulator.base_url).load_data(fresh)
    assert doc.text == "" and "ServerStatusError" in doc.metadata["ocr_error"]


def test_ids_come_from_the_path_and_hashes_from_the_page(ovis_simulator: Simulator,
                                                         tmp_path: Path):
    from ovisocr_loader.llama_index import OvisReader

    ids = [next_page_id() for _ in range(3)]
    source = tmp_path / "a.pdf"
    write_scan(ovis_simulator, source, ids)
    reader = OvisReader(base_url=ovis_simulator.base_url)
    meta = {"file_path": str(source), "file_size": 1}
    before = reader.load_data(source, extra_info=meta)
    write_scan(ovis_simulator, source, [ids[0], next_page_id(), ids[2]])
    after = reader.load_data(source, extra_info={**meta, "file_size": 2})
    assert [d.id_ for d in after] == [f"{source}_p{n}" for n in (1, 2, 3)]
    assert [a.hash == b.hash for a, b in zip(after, before, strict=True)] == [True, False, True]


NODE_IDS = """
import json, sys
from llama_index.core import Document
from ovisocr_loader.llama_index import OvisNodeParser
docs = [Document(id_=f"scan.pdf_p{n}", text=text, metadata={"page_number": n})
        for n, text in enumerate(json.loads(sys.argv[1]), start=1)]
print(json.dumps([n.id_ for n in OvisNodeParser(chunk_size=64).get_nodes_from_documents(docs)]))
"""


def test_node_ids_are_the_same_in_every_process_and_an_edit_changes_only_its_pages():
    pages = [synthetic_markdown(str(n).encode(), tokens=150) for n in range(3)]

    def node_ids(texts: list[str]) -> list[str]:
        out = subprocess.run([sys.executable, "-c", NODE_IDS, json.dumps(texts)],
                             capture_output=True, text=True, check=True, timeout=120)
        return list(json.loads(out.stdout))

    first, second = node_ids(pages), node_ids(pages)
    assert first == second and len(first) == len(set(first)) > 3
    edited = node_ids([pages[0], synthetic_markdown(b"new", tokens=150), pages[2]])
    assert set(first) - set(edited) and set(edited) - set(first)
    kept = set(first) & set(edited)
    assert len(kept) >= len(first) - 2 * (len(first) // 3 + 1)   # pages 1 and 3 kept


def page(number: int, size: int) -> PageResult:
    return PageResult(page_number=number, markdown="x" * size)


@pytest.mark.parametrize("layout", [PageCache, PageFiles])
def test_the_cache_drops_the_pages_used_longest_ago(layout: type[PageCache] | type[PageFiles],
                                                    tmp_path: Path):
    cache = layout(tmp_path, max_bytes=10_000)
    for n in range(8):
        cache.put(f"{n:064x}", "sha", page(n + 1, 2_000))
    cache.alias("a" * 64, f"{0:064x}")
    cache.evict()
    kept = [n for n in range(8) if cache.get(f"{n:064x}") is not None]
    assert kept == list(range(8 - len(kept), 8)) and 2 <= len(kept) <= 4   # newest kept
    assert cache.get("a" * 64) is None                 # its page is gone: a miss
    cache.close()


@pytest.mark.parametrize("layout", [PageCache, PageFiles])
def test_an_alias_finds_the_one_stored_copy(layout: type[PageCache] | type[PageFiles],
                                            tmp_path: Path):
    cache = layout(tmp_path)
    cache.put("b" * 64, "sha", page(3, 10))
    cache.alias("c" * 64, "b" * 64)
    cache.alias("d" * 64, "c" * 64)                    # an alias of an alias: the copy
    found = cache.get("d" * 64)
    assert found is not None and found.page_number == 3 and found.cached
    cache.close()


def test_a_cache_made_before_eviction_is_upgraded_in_place(ovis_simulator: Simulator,
                                                           tmp_path: Path):
    with sqlite3.connect(tmp_path / CACHE_FILE) as db:
        db.execute("CREATE TABLE pages (key TEXT PRIMARY KEY, source_sha256 TEXT NOT NULL, "
                   "page_number INTEGER NOT NULL, result TEXT NOT NULL, created REAL NOT NULL)")
        db.execute("INSERT INTO pages VALUES (?, 's', 1, ?, 0)",
                   ("e" * 64, page(1, 10).model_dump_json()))
    cache = PageCache(tmp_path)
    found = cache.get("e" * 64)
    assert found is not None and found.markdown == "x" * 10
    cache.close()


def test_a_simulated_server_never_fills_the_users_default_cache(
        ovis_simulator: Simulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("OVISOCR_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    source = tmp_path / "a.pdf"
    write_scan(ovis_simulator, source, [next_page_id()])
    for _ in range(2):   # made-up pages: a real server's run must not read them back
        OvisParser(base_url=ovis_simulator.base_url).parse(source)
    assert len(ovis_simulator.completions()) == 2
    named = tmp_path / "named-cache"           # a cache the caller named takes them
    for _ in range(2):
        OvisParser(base_url=ovis_simulator.base_url, cache_dir=named).parse(source)
    assert len(ovis_simulator.completions()) == 3
